# Source: https://github.com/neptune-ai/open-solution-salt-identification/issues/82
# Report: memory grew by about 3 GB after each cross-validation fold; the maintainer explained that the out-of-fold predictions on train and test are appended to a list to be averaged later, and suggested dumping them every iteration.
# Shape: out-of-fold and test predictions come back as device tensors from a predict helper decorated with no_grad; the fold loop keeps them in lists.
# Expect: TML004 lines 19, 20
import torch


@torch.no_grad()
def predict(model, loader, device="cuda"):
    model.eval()
    return torch.cat([torch.sigmoid(model(images.to(device))) for images in loader])


def train_evaluate_predict_cv(make_model, fit, folds, test_loader):
    out_of_fold, test_predictions = [], []
    for fold_id, (train_loader, valid_loader) in enumerate(folds):
        model = make_model().cuda()
        fit(model, train_loader)
        out_of_fold.append(predict(model, valid_loader))  # expect: TML004
        test_predictions.append(predict(model, test_loader))  # expect: TML004
    return out_of_fold, torch.stack(test_predictions).mean(0)
