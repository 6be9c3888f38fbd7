# Source: https://github.com/willisma/SiT/pull/43
# Report: SiT train.py draws EMA samples every sample_every steps inside the training loop with grad enabled; the VAE decode (trainable params) keeps its whole activation graph and training OOMs right after "Generating EMA samples"; the merged fix wraps the sampling in torch.no_grad()
# Shape: ema.eval() before the loop, then a periodic sampling block in the same loop runs ode sampling + vae.decode with no grad-disabled context and never backprops them
# Expect: TML003 line 61
import torch
import torch.nn as nn
from copy import deepcopy


def requires_grad(module, flag):
    for p in module.parameters():
        p.requires_grad = flag


@torch.no_grad()
def update_ema(ema, model, decay=0.9999):
    ema_params = dict(ema.named_parameters())
    for name, p in model.named_parameters():
        ema_params[name].mul_(decay).add_(p.data, alpha=1 - decay)


def train(model, vae, transport, transport_sampler, loader, args, device):
    ema = deepcopy(model).to(device)
    requires_grad(ema, False)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0)

    update_ema(ema, model, decay=0)
    model.train()
    ema.eval()  # EMA copy is only ever used for sampling

    latent = args.image_size // 8
    ys = torch.randint(1000, size=(args.local_batch,), device=device)
    zs = torch.randn(ys.size(0), 4, latent, latent, device=device)
    model_fn = ema.forward

    train_steps = 0
    running_loss = 0.0
    for epoch in range(args.epochs):
        for x, y in loader:
            x = x.to(device)
            y = y.to(device)
            with torch.no_grad():
                x = vae.encode(x).latent_dist.sample().mul_(0.18215)
            loss_dict = transport.training_losses(model, x, dict(y=y))
            loss = loss_dict["loss"].mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            update_ema(ema, model)

            running_loss += loss.item()
            train_steps += 1
            if train_steps % args.log_every == 0:
                print(f"step={train_steps:07d} loss={running_loss / args.log_every:.4f}")
                running_loss = 0.0

            if train_steps % args.sample_every == 0:
                print("Generating EMA samples...")
                sample_fn = transport_sampler.sample_ode()
                samples = sample_fn(zs, model_fn, y=ys)[-1]
                samples = vae.decode(samples / 0.18215).sample  # expect: TML003
                grid = samples.clamp(-1, 1).add(1).div(2).cpu()
                args.log_image(grid, train_steps)
                print("Generating EMA samples done.")
    return ema
