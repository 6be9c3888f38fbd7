# Source: https://github.com/hshustc/CVPR19_Incremental_Learning/blob/e5a90aed7640f3b00e5b1a8dfb5376c1628bfe6a/utils_incremental/compute_confusion_matrix.py
# Report: audit: compute_confusion_matrix() runs under no_grad but appends the CUDA targets and the CUDA predictions of the CNN, iCaRL and NCM classifiers to four lists for the whole eval set, converting only after the loop
# Shape: class-incremental evaluation helper: exemplar class means on the GPU, three classifiers per batch, four per-batch device tensors kept in lists until the confusion matrices are built
# Expect: TML004 line 48; TML004 line 52; TML004 line 57; TML004 line 60
import numpy as np
import torch
import torch.nn.functional as F
from sklearn.metrics import confusion_matrix


def compute_features(feature_model, loader, num_samples, num_features, device):
    feature_model.eval()
    features = np.zeros((num_samples, num_features), dtype=np.float32)
    start = 0
    with torch.no_grad():
        for inputs, _ in loader:
            feats = feature_model(inputs.to(device)).flatten(1)
            features[start:start + feats.size(0)] = feats.cpu().numpy()
            start += feats.size(0)
    assert start == num_samples
    return features


def class_means_from_exemplars(feature_model, exemplar_loaders, num_features, device):
    """Column 0: iCaRL mean of the exemplars, column 1: NCM mean of all class samples."""
    means = torch.zeros(len(exemplar_loaders), 2, num_features, device=device)
    for c, (exemplar_loader, full_loader, n_exemplar, n_full) in enumerate(exemplar_loaders):
        ex = F.normalize(torch.from_numpy(
            compute_features(feature_model, exemplar_loader, n_exemplar, num_features, device)), dim=1)
        full = F.normalize(torch.from_numpy(
            compute_features(feature_model, full_loader, n_full, num_features, device)), dim=1)
        means[c, 0] = F.normalize(ex.mean(0), dim=0).to(device)
        means[c, 1] = F.normalize(full.mean(0), dim=0).to(device)
    return means


def compute_confusion_matrix(model, feature_model, class_means, evalloader, device=None, print_info=False):
    device = device or torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    model.eval()
    feature_model.eval()
    num_classes = model.fc.out_features
    correct = correct_icarl = correct_ncm = total = 0
    all_targets, all_predicted, all_predicted_icarl, all_predicted_ncm = [], [], [], []
    with torch.no_grad():
        for inputs, targets in evalloader:
            inputs, targets = inputs.to(device), targets.to(device)
            total += targets.size(0)
            all_targets.append(targets)  # expect: TML004

            predicted = model(inputs).argmax(dim=1)
            correct += predicted.eq(targets).sum().item()
            all_predicted.append(predicted)  # expect: TML004

            feats = F.normalize(feature_model(inputs).flatten(1), dim=1)
            predicted_icarl = (-torch.cdist(feats, class_means[:, 0]) ** 2).argmax(dim=1)
            correct_icarl += predicted_icarl.eq(targets).sum().item()
            all_predicted_icarl.append(predicted_icarl)  # expect: TML004
            predicted_ncm = (-torch.cdist(feats, class_means[:, 1]) ** 2).argmax(dim=1)
            correct_ncm += predicted_ncm.eq(targets).sum().item()
            all_predicted_ncm.append(predicted_ncm)  # expect: TML004

    y_true = torch.cat(all_targets).cpu().numpy()
    labels = list(range(num_classes))
    cm = np.stack([
        confusion_matrix(y_true, torch.cat(preds).cpu().numpy(), labels=labels)
        for preds in (all_predicted, all_predicted_icarl, all_predicted_ncm)
    ])
    if print_info:
        for name, hits in (("CNN", correct), ("iCaRL", correct_icarl), ("NCM", correct_ncm)):
            print(f"  top 1 accuracy {name:<6}: {100.0 * hits / total:.2f} %")
    return cm
