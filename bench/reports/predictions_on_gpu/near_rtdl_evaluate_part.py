# Source: https://github.com/yandex-research/rtdl/blob/b354b35d68f28b4f5bbebd2e6d5b1f6cfa91eed1/examples/rtdl.ipynb
# Report: the rtdl (FT-Transformer / MLP / ResNet for tabular data) quick-start evaluate(part) runs under @torch.no_grad() but appends every batch's logits, still on the GPU, to a list and moves them to the CPU only after torch.cat
# Shape: the same evaluate helper, but each batch of logits is moved to the CPU with .cpu() before it is appended (as several forks of the example do), so only one batch is on the device at a time
# Expect: near-miss: must be silent
import numpy as np
import scipy.special
import sklearn.metrics
import torch
import torch.nn.functional as F
import zero

device = torch.device("cuda:0")


def apply_model(model, x_num, x_cat=None):
    if x_cat is None:
        return model(x_num)
    return model(x_num, x_cat)


def train_epoch(model, optimizer, X, y, batch_size, loss_fn):
    model.train()
    for iteration, batch_idx in enumerate(zero.iter_batches(torch.arange(len(X["train"]), device=device), batch_size)):
        x_batch = X["train"][batch_idx]
        y_batch = y["train"][batch_idx]
        optimizer.zero_grad()
        loss = loss_fn(apply_model(model, x_batch).squeeze(1), y_batch)
        loss.backward()
        optimizer.step()
        if iteration % 100 == 0:
            print(f"(iteration) {iteration} (loss) {loss.item():.4f}")


@torch.no_grad()
def evaluate(model, X, y, part, task_type, y_std=1.0):
    model.eval()
    prediction = []
    for batch in zero.iter_batches(X[part], 1024):
        prediction.append(apply_model(model, batch).cpu())
    prediction = torch.cat(prediction).squeeze(1).numpy()
    target = y[part].cpu().numpy()

    if task_type == "binclass":
        prediction = np.round(scipy.special.expit(prediction))
        score = sklearn.metrics.accuracy_score(target, prediction)
    elif task_type == "multiclass":
        score = sklearn.metrics.accuracy_score(target, prediction.argmax(1))
    else:
        score = sklearn.metrics.mean_squared_error(target, prediction) ** 0.5 * y_std
    return score


def fit(model, optimizer, X, y, task_type, n_epochs=100, batch_size=256, patience=16):
    loss_fn = F.binary_cross_entropy_with_logits if task_type == "binclass" else F.mse_loss
    best_val, stale = -np.inf, 0
    for epoch in range(1, n_epochs + 1):
        train_epoch(model, optimizer, X, y, batch_size, loss_fn)
        val_score = evaluate(model, X, y, "val", task_type)
        test_score = evaluate(model, X, y, "test", task_type)
        print(f"Epoch {epoch:03d} | Validation score: {val_score:.4f} | Test score: {test_score:.4f}")
        if val_score > best_val:
            best_val, stale = val_score, 0
        else:
            stale += 1
            if stale >= patience:
                break
    return best_val
