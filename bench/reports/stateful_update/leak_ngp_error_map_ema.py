# Source: https://github.com/ashawkey/torch-ngp/blob/main/nerf/utils.py
# Report: torch-ngp's NeRF Trainer keeps a per-image error map (EMA of the per-ray loss) to importance-sample rays; the repo writes loss.detach() into it, this variant writes the per-ray loss itself
# Shape: train_step takes error_map = self.error_map[index], scatters ema_error = 0.1 * old + 0.9 * error into it and puts it back into self.error_map (a tensor that lives for the whole training); without detach each step's per-ray loss graph is chained onto the previous error map
# Expect: TML005 line 59
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, optimizer, lr_scheduler, device="cuda", fp16=True, patch_size=1):
        self.model = model.to(device)
        self.optimizer = optimizer
        self.lr_scheduler = lr_scheduler
        self.device = device
        self.fp16 = fp16
        self.patch_size = patch_size
        self.criterion = nn.MSELoss(reduction="none")
        self.scaler = torch.cuda.amp.GradScaler(enabled=fp16)
        self.error_map = None
        self.global_step = 0
        self.local_step = 0
        self.epoch = 0

    def log(self, *args):
        print(*args)

    def train_step(self, data):
        rays_o = data["rays_o"]  # [B, N, 3]
        rays_d = data["rays_d"]  # [B, N, 3]
        images = data["images"]  # [B, N, 3/4]
        B, N, C = images.shape

        if C == 3:
            bg_color = 1
        else:
            bg_color = torch.rand_like(images[..., :3])
        if C == 4:
            gt_rgb = images[..., :3] * images[..., 3:] + bg_color * (1 - images[..., 3:])
        else:
            gt_rgb = images

        outputs = self.model.render(rays_o, rays_d, staged=False, bg_color=bg_color, perturb=True)
        pred_rgb = outputs["image"]
        loss = self.criterion(pred_rgb, gt_rgb).mean(-1)  # [B, N]

        # update the error map used to sample rays
        if self.error_map is not None:
            index = data["index"]  # [B]
            inds = data["inds_coarse"]  # [B, N]
            error_map = self.error_map[index]  # [B, H * W]

            error = loss.to(error_map.device)  # [B, N], already in [0, 1]

            # ema update
            ema_error = 0.1 * error_map.gather(1, inds) + 0.9 * error
            error_map.scatter_(1, inds, ema_error)

            # put back
            self.error_map[index] = error_map  # expect: TML005

        loss = loss.mean()
        return pred_rgb, gt_rgb, loss

    def train(self, train_loader, max_epochs):
        self.error_map = train_loader._data.error_map
        for epoch in range(self.epoch + 1, max_epochs + 1):
            self.epoch = epoch
            self.train_one_epoch(train_loader)

    def train_one_epoch(self, loader):
        total_loss = 0
        self.model.train()
        self.local_step = 0
        for data in loader:
            self.local_step += 1
            self.global_step += 1
            self.optimizer.zero_grad()
            with torch.cuda.amp.autocast(enabled=self.fp16):
                preds, truths, loss = self.train_step(data)
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.lr_scheduler.step()

            loss_val = loss.item()
            total_loss += loss_val

        average_loss = total_loss / self.local_step
        self.log(f"==> Finished Epoch {self.epoch}, loss={average_loss:.6f}")
