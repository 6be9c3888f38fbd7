# Source: https://github.com/explainingai-code/DDPM-Pytorch/blob/ebcc802dc6d7441b8dbb71e657ce3231180f53a6/tools/sample_ddpm.py
# Report: audited idiom: the repository's reverse-diffusion sampler (xt fed back through the UNet every timestep) is run under torch.no_grad(); this is the fixed form of the per-epoch sample grid called from the training loop
# Shape: sample_grid() is decorated with @torch.no_grad(), so the rebinding xt = scheduler.sample_prev_timestep(xt, noise_pred, t) carries no graph and the eval-mode UNet call saves no activations
# Expect: near-miss: must be silent
import os

import torch
import torchvision
from torchvision.utils import make_grid

from models.unet_base import Unet

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class LinearNoiseScheduler:
    def __init__(self, num_timesteps, beta_start, beta_end):
        self.num_timesteps = num_timesteps
        self.betas = torch.linspace(beta_start, beta_end, num_timesteps).to(device)
        self.alphas = 1.0 - self.betas
        self.alpha_cum_prod = torch.cumprod(self.alphas, dim=0)
        self.sqrt_alpha_cum_prod = torch.sqrt(self.alpha_cum_prod)
        self.sqrt_one_minus_alpha_cum_prod = torch.sqrt(1 - self.alpha_cum_prod)

    def add_noise(self, original, noise, t):
        a = self.sqrt_alpha_cum_prod[t].reshape(-1, 1, 1, 1)
        b = self.sqrt_one_minus_alpha_cum_prod[t].reshape(-1, 1, 1, 1)
        return a * original + b * noise

    def sample_prev_timestep(self, xt, noise_pred, t):
        x0 = (xt - self.sqrt_one_minus_alpha_cum_prod[t] * noise_pred) / self.sqrt_alpha_cum_prod[t]
        x0 = torch.clamp(x0, -1.0, 1.0)
        mean = xt - (self.betas[t] * noise_pred) / self.sqrt_one_minus_alpha_cum_prod[t]
        mean = mean / torch.sqrt(self.alphas[t])
        if t == 0:
            return mean, x0
        variance = (1 - self.alpha_cum_prod[t - 1]) / (1.0 - self.alpha_cum_prod[t]) * self.betas[t]
        return mean + variance ** 0.5 * torch.randn_like(xt), x0


@torch.no_grad()
def sample_grid(model, scheduler, train_config, model_config, epoch_idx):
    model.eval()
    xt = torch.randn((train_config["num_samples"], model_config["im_channels"],
                      model_config["im_size"], model_config["im_size"])).to(device)
    for i in reversed(range(scheduler.num_timesteps)):
        noise_pred = model(xt, torch.as_tensor(i).unsqueeze(0).to(device))
        xt, x0_pred = scheduler.sample_prev_timestep(xt, noise_pred, torch.as_tensor(i).to(device))
    ims = (torch.clamp(xt, -1.0, 1.0).detach().cpu() + 1) / 2
    grid = make_grid(ims, nrow=train_config["num_grid_rows"])
    img = torchvision.transforms.ToPILImage()(grid)
    img.save(os.path.join(train_config["task_name"], "samples", f"epoch_{epoch_idx}.png"))
    img.close()


def train(config, mnist_loader):
    diffusion_config = config["diffusion_params"]
    model_config = config["model_params"]
    train_config = config["train_params"]
    scheduler = LinearNoiseScheduler(diffusion_config["num_timesteps"],
                                     diffusion_config["beta_start"], diffusion_config["beta_end"])
    model = Unet(model_config).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=train_config["lr"])
    criterion = torch.nn.MSELoss()
    for epoch_idx in range(train_config["num_epochs"]):
        model.train()
        losses = []
        for im in mnist_loader:
            optimizer.zero_grad()
            im = im.float().to(device)
            noise = torch.randn_like(im).to(device)
            t = torch.randint(0, diffusion_config["num_timesteps"], (im.shape[0],)).to(device)
            noisy_im = scheduler.add_noise(im, noise, t)
            noise_pred = model(noisy_im, t)
            loss = criterion(noise_pred, noise)
            losses.append(loss.item())
            loss.backward()
            optimizer.step()
        print(f"Finished epoch {epoch_idx + 1} | Loss : {sum(losses) / len(losses):.4f}")
        sample_grid(model, scheduler, train_config, model_config, epoch_idx)
        torch.save(model.state_dict(), os.path.join(train_config["task_name"], train_config["ckpt_name"]))
