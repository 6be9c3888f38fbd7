# Source: https://github.com/microsoft/aurora/blob/089c0ada34b38a9088fddd0fc985b4bf95f4e7ec/aurora/rollout.py
# Report: audited idiom: Aurora's roll-out generator is consumed under torch.inference_mode() with every prediction moved off the GPU (`preds = [pred.to("cpu") for pred in rollout(model, batch, steps=...)]`); a 10-day forecast is 40 full 0.25-degree global states
# Shape: the same inference-mode forecast loop as the docs: each prediction is moved to the host with .to("cpu") before it is kept; only the current input stays on the GPU
# Expect: near-miss: must be silent
import dataclasses
from pathlib import Path

import torch

from aurora import Aurora, Batch


def _advance(batch: Batch, pred: Batch) -> Batch:
    return dataclasses.replace(
        pred,
        surf_vars={
            k: torch.cat([batch.surf_vars[k][:, 1:], v], dim=1) for k, v in pred.surf_vars.items()
        },
        atmos_vars={
            k: torch.cat([batch.atmos_vars[k][:, 1:], v], dim=1) for k, v in pred.atmos_vars.items()
        },
    )


def load_model(ckpt: str = "aurora-0.25-pretrained.ckpt") -> Aurora:
    model = Aurora(use_lora=False)
    model.load_checkpoint("microsoft/aurora", ckpt)
    model.eval()
    return model.to("cuda")


def forecast(model: Aurora, batch: Batch, steps: int) -> list:
    p = next(model.parameters())
    batch = batch.type(p.dtype)
    batch = batch.crop(model.patch_size)
    batch = batch.to(p.device)

    preds = []
    with torch.inference_mode():
        for _ in range(steps):
            pred = model.forward(batch)
            preds.append(pred.to("cpu"))
            batch = _advance(batch, pred)
    return preds


def save_forecast(preds: list, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for i, pred in enumerate(preds):
        t2m = pred.surf_vars["2t"][0, 0].numpy()
        msl = pred.surf_vars["msl"][0, 0].numpy()
        torch.save({"2t": t2m, "msl": msl, "time": pred.metadata.time}, out_dir / f"step_{i:03d}.pt")


if __name__ == "__main__":
    from era5_batch import build_batch

    model = load_model()
    batch = build_batch("2023-01-01T00")
    preds = forecast(model, batch, steps=40)  # 10 days at 6 h
    save_forecast(preds, Path("forecasts/2023-01-01"))
