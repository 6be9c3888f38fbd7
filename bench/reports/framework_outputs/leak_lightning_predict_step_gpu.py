# Source: https://github.com/Lightning-AI/pytorch-lightning/issues/10156
# Report: Trainer.predict keeps every predict_step return value in its results list, and they stay on the GPU where predict_step produced them; maintainers: working as intended, move them to the CPU yourself
# Shape: LightningModule whose predict_step returns a dict of device tensors; trainer.predict(return_predictions defaults to True) collects them for the whole dataset
# Expect: TML017 line 37
import torch
import lightning.pytorch as pl
from torch.utils.data import DataLoader, Dataset


class RandomDataset(Dataset):
    def __init__(self, size, length):
        self.data = torch.randn(length, size)

    def __getitem__(self, index):
        return self.data[index]

    def __len__(self):
        return len(self.data)


class Regressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.backbone = torch.nn.Sequential(torch.nn.Linear(32, 512), torch.nn.ReLU())
        self.head = torch.nn.Linear(512, 1)

    def forward(self, x):
        return self.head(self.backbone(x))

    def training_step(self, batch, batch_idx):
        loss = self(batch).pow(2).mean()
        self.log("train_loss", loss)
        return loss

    def predict_step(self, batch, batch_idx, dataloader_idx=0):
        feats = self.backbone(batch)
        return {"pred": self.head(feats), "embedding": feats}  # expect: TML017

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def run():
    model = Regressor()
    trainer = pl.Trainer(accelerator="gpu", devices=1, max_epochs=1, logger=False)
    trainer.fit(model, DataLoader(RandomDataset(32, 4096), batch_size=64))
    outputs = trainer.predict(model, DataLoader(RandomDataset(32, 2_000_000), batch_size=256))
    preds = torch.cat([o["pred"] for o in outputs]).cpu()
    embeddings = torch.cat([o["embedding"] for o in outputs]).cpu()
    return preds, embeddings
