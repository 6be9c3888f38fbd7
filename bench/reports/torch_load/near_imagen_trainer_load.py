# Source: https://github.com/lucidrains/imagen-pytorch/pull/132
# Report: the multi-GPU ImagenTrainer.load called torch.load(path) with no map_location, so every process deserialised the checkpoint onto the device it was saved from ('cuda:0'), wasting extra GPU memory on cuda:0; the PR loads to CPU first.
# Shape: the merged fix: the same load() passes map_location="cpu", so each rank deserialises on the host and load_state_dict copies the tensors onto the devices the modules already occupy.
# Expect: near-miss: must be silent
from pathlib import Path

import torch
from torch.cuda.amp import GradScaler


class ImagenTrainer(torch.nn.Module):
    def __init__(self, imagen, accelerator, lr=1e-4, use_ema=True):
        super().__init__()
        self.imagen = imagen
        self.accelerator = accelerator
        self.num_unets = len(imagen.unets)
        self.use_ema = use_ema
        self.ema_unets = torch.nn.ModuleList([u for u in imagen.unets]) if use_ema else None
        self.register_buffer("steps", torch.zeros(self.num_unets, dtype=torch.long))
        for ind, unet in enumerate(imagen.unets):
            setattr(self, f"optim{ind}", torch.optim.Adam(unet.parameters(), lr=lr))
            setattr(self, f"scaler{ind}", GradScaler())
            setattr(self, f"scheduler{ind}", None)

    def print(self, msg):
        if self.accelerator.is_main_process:
            print(msg)

    def load(self, path, only_model=False, strict=True, noop_if_not_exist=False):
        path = Path(path)
        if noop_if_not_exist and not path.exists():
            self.print(f"trainer checkpoint not found at {str(path)}")
            return None
        assert path.exists(), f"{path} does not exist"

        loaded_obj = torch.load(str(path), map_location="cpu")

        self.imagen.load_state_dict(loaded_obj["model"], strict=strict)
        if only_model:
            return loaded_obj

        self.steps.copy_(loaded_obj["steps"])
        for ind in range(self.num_unets):
            scaler = getattr(self, f"scaler{ind}")
            optimizer = getattr(self, f"optim{ind}")
            scheduler = getattr(self, f"scheduler{ind}")
            if scheduler is not None and f"scheduler{ind}" in loaded_obj:
                scheduler.load_state_dict(loaded_obj[f"scheduler{ind}"])
            if optimizer is not None:
                optimizer.load_state_dict(loaded_obj[f"optim{ind}"])
                scaler.load_state_dict(loaded_obj[f"scaler{ind}"])

        if self.use_ema:
            self.ema_unets.load_state_dict(loaded_obj["ema"], strict=strict)

        self.print(f"checkpoint loaded from {str(path)}")
        return loaded_obj
