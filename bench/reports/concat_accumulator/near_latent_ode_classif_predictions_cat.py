# Source: https://github.com/YuliaRubanova/latent_ode/blob/c0682d4f52b806fb88d965755892eadd9783f936/lib/utils.py
# Report: audit of latent_ode's compute_loss_all_batches(), which grows its prediction and label tensors with torch.cat((acc, new), dim) every batch; the fix collects per-batch CPU chunks in lists and concatenates once after the loop
# Shape: same dict of loss terms (summed after the isinstance/.detach() guard), predictions and labels appended as .cpu() chunks and joined with a single torch.cat after the batch loop
# Expect: near-miss: must be silent
import torch
from sklearn.metrics import roc_auc_score

LOSS_KEYS = ("loss", "likelihood", "mse", "kl_first_p", "std_first_p", "ce_loss")


@torch.no_grad()
def compute_loss_all_batches(model, loader, n_batches, device, n_traj_samples=1, kl_coef=1.0, classif=True):
    total = {key: 0.0 for key in LOSS_KEYS}
    pred_chunks, label_chunks = [], []
    data_iter = iter(loader)
    for _ in range(n_batches):
        batch = {k: v.to(device) for k, v in next(data_iter).items()}
        results = model.compute_all_losses(batch, n_traj_samples=n_traj_samples, kl_coef=kl_coef)
        if classif:
            preds = results["label_predictions"].reshape(n_traj_samples, -1, model.n_labels)
            pred_chunks.append(preds.cpu())
            label_chunks.append(batch["labels"].reshape(-1, model.n_labels).cpu())
        for key in LOSS_KEYS:
            if key in results:
                value = results[key]
                if isinstance(value, torch.Tensor):
                    value = value.detach()
                total[key] += value
    total = {key: value / max(n_batches, 1) for key, value in total.items()}
    if classif:
        classif_predictions = torch.cat(pred_chunks, 1)
        all_test_labels = torch.cat(label_chunks, 0)
        labels = all_test_labels.repeat(n_traj_samples, 1, 1)
        keep = ~torch.isnan(labels)
        y_true, y_score = labels[keep].cpu().numpy(), classif_predictions[keep].cpu().numpy()
        total["auc"] = roc_auc_score(y_true, y_score) if y_true.sum() > 0 else 0.0
    return total


def train(model, train_loader, test_loader, n_iters, num_batches, device="cuda", lr=1e-2):
    optimizer = torch.optim.Adamax(model.parameters(), lr=lr)
    train_iter = iter(train_loader)
    for itr in range(1, n_iters + 1):
        optimizer.zero_grad()
        try:
            batch = next(train_iter)
        except StopIteration:
            train_iter = iter(train_loader)
            batch = next(train_iter)
        batch = {k: v.to(device) for k, v in batch.items()}
        kl_coef = 0.0 if itr // num_batches < 10 else 1 - 0.99 ** (itr // num_batches - 10)
        train_res = model.compute_all_losses(batch, n_traj_samples=3, kl_coef=kl_coef)
        train_res["loss"].backward()
        optimizer.step()
        if itr % num_batches == 0:
            test_res = compute_loss_all_batches(model, test_loader, len(test_loader), device,
                                                n_traj_samples=3, kl_coef=kl_coef)
            print(f"epoch {itr // num_batches}: train loss {train_res['loss'].item():.4f} "
                  f"test loss {float(test_res['loss']):.4f} auc {test_res['auc']:.4f}")
    return model
