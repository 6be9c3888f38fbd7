# Source: https://github.com/MohammadAmmargk8497/OCTpytorch/blob/0bf4bd668ed6b2bd061ed82b8e1208dc02209106/engiine.py
# Report: audited OCT classifier training (engiine.py + logger.py): every 25 batches train_step hands the raw loss tensor to logger.train_log, which forwards it to wandb.log
# Shape: the helper keeps only float(loss) in its module-level smoothing history and passes the tensor straight to wandb.log, which serialises it and keeps nothing; the loop still hands the attached loss to the helper, as the repository does
# Expect: near-miss: must be silent
from typing import Tuple

import torch
import wandb
from tqdm.auto import tqdm

# ---- logger.py -------------------------------------------------------------
_loss_history = []


def train_log(loss, example_ct, epoch, window=20):
    _loss_history.append(float(loss))
    recent = _loss_history[-window:]
    smooth = sum(recent) / len(recent)
    wandb.log({"epoch": epoch, "loss": loss, "loss_smooth": smooth}, step=example_ct)


# ---- engiine.py ------------------------------------------------------------
def train_step(model: torch.nn.Module,
               dataloader: torch.utils.data.DataLoader,
               accumulation_steps: int,
               loss_fn: torch.nn.Module,
               optimizer: torch.optim.Optimizer,
               device: torch.device,
               batch_cnt: int,
               exp_cnt: int,
               epoch: int) -> Tuple[float, float]:
    model.train()
    train_loss, train_acc = 0.0, 0.0

    for batch, (X, y) in tqdm(enumerate(dataloader), total=len(dataloader)):
        X, y = X.to(device), y.to(device)
        y_pred = model(X)

        loss = loss_fn(y_pred, y)
        exp_cnt += len(X)
        batch_cnt += 1
        train_loss += loss.item()
        if ((batch_cnt + 1) % 25) == 0:
            train_log(loss, exp_cnt, epoch)
        loss = loss / accumulation_steps
        loss.backward()

        if ((batch + 1) % accumulation_steps == 0) or (batch + 1 == len(dataloader)):
            optimizer.step()
            optimizer.zero_grad()

        y_pred_class = torch.argmax(torch.softmax(y_pred, dim=1), dim=1)
        train_acc += (y_pred_class == y).sum().item() / len(y_pred)

    train_loss = train_loss / len(dataloader)
    train_acc = train_acc / len(dataloader)
    return train_loss, train_acc
