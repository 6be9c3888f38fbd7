# Source: https://github.com/PatrickHua/SimSiam/blob/6730ea4f39fb86d2e0bfe73e26c6e84c0d419c85/tools/knn_monitor.py
# Report: audited kNN monitor run every epoch of SimSiam pre-training: under no_grad it appends every test batch's normalized CUDA features to test_feature_bank and returns the concatenation, so the whole test set's features sit on the GPU next to the memory bank
# Shape: same monitor, but each batch's features are moved to the host before being kept (.cpu()); the memory bank is moved back to the GPU once after the loop, so nothing grows on the device per batch
# Expect: near-miss: must be silent
from tqdm import tqdm
import torch
import torch.nn.functional as F


def knn_predict(feature, feature_bank, feature_labels, classes, knn_k, knn_t):
    sim_matrix = torch.mm(feature, feature_bank)
    sim_weight, sim_indices = sim_matrix.topk(k=knn_k, dim=-1)
    sim_labels = torch.gather(feature_labels.expand(feature.size(0), -1), dim=-1, index=sim_indices)
    sim_weight = (sim_weight / knn_t).exp()
    one_hot = torch.zeros(feature.size(0) * knn_k, classes, device=sim_labels.device)
    one_hot = one_hot.scatter(dim=-1, index=sim_labels.view(-1, 1), value=1.0)
    scores = torch.sum(one_hot.view(feature.size(0), -1, classes) * sim_weight.unsqueeze(-1), dim=1)
    return scores.argsort(dim=-1, descending=True)


def knn_monitor(net, memory_data_loader, test_data_loader, epoch, k=200, t=0.1, hide_progress=False):
    net.eval()
    classes = len(memory_data_loader.dataset.classes)
    total_top1, total_num, feature_bank = 0.0, 0, []
    with torch.no_grad():
        for data, _ in tqdm(memory_data_loader, desc="Feature extracting", disable=hide_progress):
            feature = net(data.cuda(non_blocking=True))
            feature = F.normalize(feature, dim=1)
            feature_bank.append(feature.cpu())
        feature_bank = torch.cat(feature_bank, dim=0).t().contiguous().cuda()
        feature_labels = torch.tensor(memory_data_loader.dataset.targets, device=feature_bank.device)

        test_feature_bank = []
        test_bar = tqdm(test_data_loader, desc="kNN", disable=hide_progress)
        for data, target in test_bar:
            data = data.cuda(non_blocking=True)
            target = target.cuda(non_blocking=True)
            feature = net(data)
            feature = F.normalize(feature, dim=1)
            test_feature_bank.append(feature.cpu())
            pred_labels = knn_predict(feature, feature_bank, feature_labels, classes, k, t)
            total_num += data.size(0)
            total_top1 += (pred_labels[:, 0] == target).float().sum().item()
            test_bar.set_postfix({"Accuracy": total_top1 / total_num * 100})
        test_feature_bank = torch.cat(test_feature_bank, dim=0).contiguous()
    return total_top1 / total_num * 100, test_feature_bank


def run_epoch_monitor(model, memory_loader, test_loader, epoch, logger):
    acc, test_feats = knn_monitor(model.backbone, memory_loader, test_loader, epoch)
    logger.update_scalers({"knn_acc": acc})
    return test_feats
