# Source: https://github.com/Tin-Hoang/humanfaces-diffusion-generation/blob/0fea229ca2b77ffc96e17052d0428827d0e99108/diffusion_models/utils/metrics.py
# Report: audited idiom: the per-epoch FID check of the face-generation training loop streams each generated batch and each validation batch into torchmetrics' FrechetInceptionDistance under torch.no_grad(); this rewrite first collects all generated and real batches and feeds FID once at the end
# Shape: under no_grad, the generated tensors (moved .to(device)) and the validation images (.to(device)) are appended to lists bound before the loops, so every image of the FID set sits on the GPU until the final torch.cat
# Expect: TML004 line 39; TML004 line 45
from typing import Optional

import torch
from diffusers import DDPMPipeline
from torch.utils.data import DataLoader
from torchmetrics.image.fid import FrechetInceptionDistance


def generate_and_calculate_fid(
    pipeline: DDPMPipeline,
    val_dataloader: DataLoader,
    device: torch.device,
    preprocess,
    num_train_timesteps: int,
    num_samples: Optional[int] = 50,
) -> float:
    """Calculate FID between pipeline samples and the validation set."""
    fid = FrechetInceptionDistance(normalize=True).to(device)
    if num_samples is None:
        num_samples = len(val_dataloader.dataset)
    fake_batches = []
    real_batches = []
    with torch.no_grad():
        remaining_samples = num_samples
        while remaining_samples > 0:
            val_batch_size = val_dataloader.batch_size or 16
            batch_size = min(val_batch_size, remaining_samples)
            samples = pipeline(
                batch_size=batch_size,
                generator=torch.manual_seed(42),
                num_inference_steps=num_train_timesteps,
            ).images
            sample_tensors = torch.stack([preprocess(image) for image in samples]).to(device)
            sample_tensors = (sample_tensors * 0.5 + 0.5).clamp(0, 1)
            fake_batches.append(sample_tensors)  # expect: TML004
            remaining_samples -= batch_size

        for batch in val_dataloader:
            real_images = batch["images"].to(device)
            real_images = (real_images * 0.5 + 0.5).clamp(0, 1)
            real_batches.append(real_images)  # expect: TML004

        fid.update(torch.cat(fake_batches), real=False)
        fid.update(torch.cat(real_batches), real=True)
    return float(fid.compute())


def log_fid(epoch, pipeline, val_dataloader, accelerator, preprocess, config, best_fid_score):
    print(f"Calculating FID score at epoch {epoch + 1}...")
    fid_score = generate_and_calculate_fid(
        pipeline=pipeline,
        val_dataloader=val_dataloader,
        device=accelerator.device,
        preprocess=preprocess,
        num_train_timesteps=config.num_train_timesteps,
        num_samples=config.val_n_samples,
    )
    print(f"FID Score: {fid_score:.2f}")
    if fid_score < best_fid_score:
        best_fid_score = fid_score
        pipeline.save_pretrained(config.output_dir + "/best_model")
    return best_fid_score
