# Source: https://github.com/mmcdermott/MEDS_EIC_AR/pull/141
# Report: predict_step returned generated token tensors (plus index tensors) still on the GPU; Trainer.predict accumulates every batch's return value in a list for the whole run (dataset expanded n_trajectories times), pinning per-batch GPU memory until OOM; fixed by .detach().cpu() before returning
# Shape: LightningModule.predict_step returns a dict of device tensors built from model.generate and the batch; trainer.predict keeps them all, the caller demuxes afterwards on CPU
# Expect: TML017 line 41
import lightning as L
import torch
from torch.utils.data import DataLoader, Dataset


class RepeatedPredictionDataset(Dataset):
    def __init__(self, base: Dataset, n_trajectories: int):
        self.base = base
        self.n_trajectories = n_trajectories

    def __len__(self):
        return len(self.base) * self.n_trajectories

    def __getitem__(self, idx):
        subject_idx, trajectory_idx = divmod(idx, self.n_trajectories)
        return self.base[subject_idx], subject_idx, trajectory_idx


class MEICARModule(L.LightningModule):
    def __init__(self, model, generation_kwargs=None):
        super().__init__()
        self.model = model
        self.generation_kwargs = generation_kwargs or {}

    def training_step(self, batch, batch_idx):
        out = self.model(batch)
        self.log("train/loss", out.loss)
        return out.loss

    def predict_step(self, batch, batch_idx):
        """Generate one trajectory per row.

        Returns ``tokens`` [B, L], ``subject_idxs`` [B], ``trajectory_idxs`` [B].
        """
        mdata_batch, subject_idxs, trajectory_idxs = batch
        tokens = self.model.generate(mdata_batch, **self.generation_kwargs)
        return {"tokens": tokens, "subject_idxs": subject_idxs, "trajectory_idxs": trajectory_idxs}  # expect: TML017


def generate_trajectories(module, base_ds, n_trajectories=20, batch_size=64):
    ds = RepeatedPredictionDataset(base_ds, n_trajectories)
    dl = DataLoader(ds, batch_size=batch_size, shuffle=False, num_workers=4)
    trainer = L.Trainer(accelerator="gpu", devices=1, logger=False)
    predictions = trainer.predict(module, dataloaders=dl)
    tokens = torch.cat([p["tokens"].cpu() for p in predictions])
    subject_idxs = torch.cat([p["subject_idxs"].cpu() for p in predictions])
    trajectory_idxs = torch.cat([p["trajectory_idxs"].cpu() for p in predictions])
    return tokens, subject_idxs, trajectory_idxs
