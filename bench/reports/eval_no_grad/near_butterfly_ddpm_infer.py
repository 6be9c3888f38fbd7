# Source: https://github.com/kevin-tofu/diffusers-transformers/blob/main/src/infer.py
# Report: diffusers UNet2DModel + DDPMScheduler butterflies tutorial: training loop, then a hand-written sampling loop that calls the UNet under torch.no_grad() and steps the scheduler outside it.
# Shape: only the model call sits in no_grad, but that is enough: residual is not attached, so scheduler.step(...).prev_sample built from it and from the randn start is graph-free and the loop-carried sample never links the timesteps; training keeps loss.item() floats.
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F
from diffusers import DDPMScheduler, UNet2DModel

device = "cuda" if torch.cuda.is_available() else "cpu"


def build_model(image_size=32):
    return UNet2DModel(
        sample_size=image_size,
        in_channels=3,
        out_channels=3,
        layers_per_block=2,
        block_out_channels=(64, 128, 128, 256),
        down_block_types=("DownBlock2D", "DownBlock2D", "AttnDownBlock2D", "AttnDownBlock2D"),
        up_block_types=("AttnUpBlock2D", "AttnUpBlock2D", "UpBlock2D", "UpBlock2D"),
    ).to(device)


def train(model, noise_scheduler, train_dataloader, epochs=30):
    optimizer = torch.optim.AdamW(model.parameters(), lr=4e-4)
    losses = []
    for epoch in range(epochs):
        for step, batch in enumerate(train_dataloader):
            clean_images = batch["images"].to(device)
            noise = torch.randn(clean_images.shape).to(clean_images.device)
            bs = clean_images.shape[0]
            timesteps = torch.randint(
                0, noise_scheduler.config.num_train_timesteps, (bs,), device=clean_images.device
            ).long()
            noisy_images = noise_scheduler.add_noise(clean_images, noise, timesteps)
            noise_pred = model(noisy_images, timesteps, return_dict=False)[0]
            loss = F.mse_loss(noise_pred, noise)
            loss.backward()
            losses.append(loss.item())
            optimizer.step()
            optimizer.zero_grad()
        if (epoch + 1) % 5 == 0:
            last = sum(losses[-len(train_dataloader):]) / len(train_dataloader)
            print(f"Epoch:{epoch + 1}, loss: {last}")
    return losses


def infer(model, noise_scheduler, n_images=8, image_size=32):
    sample = torch.randn(n_images, 3, image_size, image_size).to(device)
    for i, t in enumerate(noise_scheduler.timesteps):
        with torch.no_grad():
            residual = model(sample, t).sample
        sample = noise_scheduler.step(residual, t, sample).prev_sample
    return (sample.clamp(-1, 1) + 1) / 2


if __name__ == "__main__":
    from datasets import load_dataset
    from torchvision import transforms

    tf = transforms.Compose([transforms.Resize((32, 32)), transforms.ToTensor(), transforms.Normalize([0.5], [0.5])])
    dataset = load_dataset("huggan/smithsonian_butterflies_subset", split="train")
    dataset.set_transform(lambda ex: {"images": [tf(im.convert("RGB")) for im in ex["image"]]})
    loader = torch.utils.data.DataLoader(dataset, batch_size=64, shuffle=True)
    unet = build_model()
    scheduler = DDPMScheduler(num_train_timesteps=1000, beta_schedule="squaredcos_cap_v2")
    train(unet, scheduler, loader)
    images = infer(unet, scheduler)
