# Source: https://github.com/lightly-ai/lightly-train/pull/399
# Report: "Reduce memory usage for predict": the PR added `del batch, mask; torch.cuda.empty_cache()` at the end of every iteration of the semantic-segmentation predict loop; the reviewer asked whether it was needed at all, since batch and mask are overwritten in the next iteration, and what it costs in speed (the merged code later put it behind a remove_cache flag).
# Shape: the Fabric predict loop as added by the PR: one image per step, the mask is moved to numpy and saved, and the cache is emptied once after the loop instead of on every iteration (what the reviewer's question points to); the forward runs under torch.no_grad() here so that only the cache call is at issue.
# Expect: near-miss: must be silent
from __future__ import annotations

import logging
from pathlib import Path

import torch
from lightning_fabric import Fabric
from torch import Tensor
from torch.utils.data import DataLoader

from lightly_train._commands import predict_task_helpers
from lightly_train._task_models import task_model_helpers

logger = logging.getLogger(__name__)


def _predict_task_from_config(config) -> None:
    fabric = Fabric(accelerator=config.accelerator, devices=config.devices, precision=config.precision)
    fabric.launch()

    model = task_model_helpers.load_model(model=config.model)
    dataset = predict_task_helpers.get_dataset(data=config.data, num_channels=config.num_channels)
    num_images = len(dataset)
    dataloader = fabric.setup_dataloaders(
        DataLoader(dataset, batch_size=config.batch_size, num_workers=config.num_workers)
    )

    predict_model = fabric.setup_module(model)
    predict_model.mark_forward_method("predict")

    logger.info(f"Creating predictions for {num_images} images...")
    for idx, batch in enumerate(dataloader):
        image_filename: str = batch["filename"][0]
        image: Tensor = batch["views"][0][0]

        with torch.no_grad():
            mask: Tensor = predict_model.predict(image)

        mask_numpy = mask.cpu().numpy()
        mask_filepath: Path = predict_task_helpers.compute_mask_filepath(config.out, config.data, image_filename)
        try:
            predict_task_helpers.save_mask(mask_numpy, mask_filepath)
        except Exception as e:
            logger.error(f"Could not save predicted mask for image '{image_filename}' at '{mask_filepath}': {e}")

        if idx % config.log_every_num_steps == 0:
            logger.info(f"Images {(idx + 1) * config.batch_size}/{num_images}")

    # free memory once, after the last image, before the process moves on
    del batch, mask
    if torch.cuda.is_available():
        torch.cuda.empty_cache()

    logger.info("Prediction completed.")
