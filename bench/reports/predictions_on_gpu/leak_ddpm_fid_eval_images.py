# Source: https://github.com/w86763777/pytorch-ddpm/blob/f804ccbd58a758b07f79a3b9ecdfb1beb67258f6/main.py
# Report: audit of the DDPM CIFAR-10 trainer: evaluate() samples num_images (50k) images in batches under no_grad and moves each batch to the CPU before appending; this variant drops the .cpu(), the slip the repository avoided
# Shape: the periodic IS/FID evaluation keeps every sampled 3x32x32 batch on the GPU in a list that is concatenated only after the loop (device memory grows with num_images)
# Expect: TML004 line 25
import copy

import torch
from torchvision.utils import make_grid, save_image


def ema(source, target, decay):
    src, tgt = source.state_dict(), target.state_dict()
    for key in src:
        tgt[key].data.copy_(tgt[key].data * decay + src[key].data * (1 - decay))


def evaluate(sampler, model, flags, device, score_fn):
    model.eval()
    with torch.no_grad():
        images = []
        for i in range(0, flags.num_images, flags.batch_size):
            batch_size = min(flags.batch_size, flags.num_images - i)
            x_T = torch.randn(batch_size, 3, flags.img_size, flags.img_size)
            batch_images = sampler(x_T.to(device))
            images.append((batch_images + 1) / 2)  # expect: TML004
        images = torch.cat(images, dim=0).cpu().numpy()
    model.train()
    (is_mean, is_std), fid = score_fn(images)
    return (is_mean, is_std), fid, images


def train(net_model, trainer, make_sampler, datalooper, flags, writer, score_fn, device="cuda"):
    ema_model = copy.deepcopy(net_model)
    optim = torch.optim.Adam(net_model.parameters(), lr=flags.lr)
    sched = torch.optim.lr_scheduler.LambdaLR(optim, lambda s: min(s, flags.warmup) / flags.warmup)
    net_sampler, ema_sampler = make_sampler(net_model), make_sampler(ema_model)
    x_T = torch.randn(flags.sample_size, 3, flags.img_size, flags.img_size, device=device)
    for step in range(flags.total_steps):
        optim.zero_grad()
        x_0 = next(datalooper).to(device)
        loss = trainer(x_0).mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net_model.parameters(), flags.grad_clip)
        optim.step()
        sched.step()
        ema(net_model, ema_model, flags.ema_decay)
        writer.add_scalar("loss", loss, step)

        if flags.sample_step > 0 and step % flags.sample_step == 0:
            net_model.eval()
            with torch.no_grad():
                grid = (make_grid(ema_sampler(x_T)) + 1) / 2
                save_image(grid, f"{flags.logdir}/sample/{step}.png")
                writer.add_image("sample", grid, step)
            net_model.train()

        if flags.eval_step > 0 and step % flags.eval_step == 0:
            net_is, net_fid, _ = evaluate(net_sampler, net_model, flags, device, score_fn)
            ema_is, ema_fid, _ = evaluate(ema_sampler, ema_model, flags, device, score_fn)
            metrics = {"IS": net_is[0], "FID": net_fid, "IS_EMA": ema_is[0], "FID_EMA": ema_fid}
            for name, value in metrics.items():
                writer.add_scalar(name, value, step)
