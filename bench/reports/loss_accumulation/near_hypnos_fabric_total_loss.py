# Source: https://github.com/vuanhtuan1407/HypnosNet/blob/main/src/hypnos/training.py
# Report: the Fabric sleep-staging fit() loop of the repository: the soft-label loss reaches the running total as loss.item(); the gradients are jittered in place (stuck-survival noise) between backward and step
# Shape: total_loss and val_loss stay Python floats (.item()); the p.grad += noise update touches .grad buffers, which carry no graph; validation runs under torch.no_grad()
# Expect: near-miss: must be silent
import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm


def cal_kl_mse_cos_entropy_loss(soft_lbs_hat, soft_lbs, kl_t):
    log_probs = F.log_softmax(soft_lbs_hat / kl_t, dim=1)
    probs = F.softmax(soft_lbs_hat, dim=1)
    kl = F.kl_div(log_probs, soft_lbs, reduction="batchmean") * (kl_t ** 2)
    mse = F.mse_loss(probs, soft_lbs)
    cos = 1 - F.cosine_similarity(probs, soft_lbs, dim=1).mean()
    entropy = -(probs * probs.clamp(min=1e-8).log()).sum(dim=1).mean()
    return kl + 0.3 * mse + 0.05 * cos + 0.01 * entropy


class HypnosNet(nn.Module):
    def __init__(self, in_ch=3, hidden=128, n_phases=7):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv1d(in_ch, 64, 7, padding=3), nn.GELU(), nn.MaxPool1d(4),
            nn.Conv1d(64, hidden, 5, padding=2), nn.GELU(), nn.AdaptiveAvgPool1d(1), nn.Flatten())
        self.head = nn.Linear(hidden, n_phases)

    def forward(self, sns):
        z = self.encoder(sns)
        return z, self.head(z)


def fit(fabric, model, train_loader, val_loader, optimizer, logger, config):
    model.train()
    for epoch in range(config["train"]["epochs"]):
        logger.info(f"Epoch {epoch + 1}/{config['train']['epochs']}")
        total_loss = total_samples = 0
        train_tqdm = tqdm(enumerate(train_loader), total=len(train_loader), desc="Training")
        for batch_idx, batch in train_tqdm:
            optimizer.zero_grad()
            sns, lbs_phs, dur, _ = batch
            z, lbs_phs_hat = model(sns)
            loss = cal_kl_mse_cos_entropy_loss(lbs_phs_hat, lbs_phs, config["train"]["kl_t"])
            fabric.backward(loss)

            # stuck-survival training: jitter the gradients before the step
            for n, p in model.named_parameters():
                if p.grad is not None:
                    p.grad += torch.randn_like(p.grad) * config["train"].get("sst_noise", 1e-4)

            optimizer.step()
            total_loss += loss.item()
            total_samples += lbs_phs.shape[0]
            train_tqdm.set_postfix(loss=f"{total_loss / total_samples:.4f}")
        logger.info(f"Epoch {epoch + 1} - Train Loss: {total_loss / total_samples:.4f}")

        model.eval()
        val_loss = val_samples = 0
        with torch.no_grad():
            for batch_idx, batch in enumerate(val_loader):
                sns, lbs_phs, dur, _ = batch
                z, lbs_phs_hat = model(sns)
                loss = cal_kl_mse_cos_entropy_loss(lbs_phs_hat, lbs_phs, config["train"]["kl_t"])
                val_loss += loss.item()
                val_samples += lbs_phs.shape[0]
        logger.info(f"Epoch {epoch + 1} - Val Loss: {val_loss / val_samples:.4f}")
        model.train()


def main(train_loader, val_loader, logger, config):
    fabric = L.Fabric(accelerator="cuda", devices=1, precision="bf16-mixed")
    fabric.launch()
    model = HypnosNet()
    optimizer = torch.optim.AdamW(model.parameters(), lr=config["train"]["lr"])
    model, optimizer = fabric.setup(model, optimizer)
    train_loader, val_loader = fabric.setup_dataloaders(train_loader, val_loader)
    fit(fabric, model, train_loader, val_loader, optimizer, logger, config)
