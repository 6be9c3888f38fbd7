# Source: https://github.com/mlfoundations/open_clip/pull/26
# Report: CLIP validation kept every batch's image/text features on the GPU and built the N x N retrieval logits there; with a ~20k validation set this costs GBs of extra GPU memory while training; the PR moves the work to the CPU
# Shape: as after the PR, each batch's features are moved to the CPU before they are kept, so the N x N logits are built on the CPU
# Expect: near-miss: must be silent
import logging

import numpy as np
import torch


def get_metrics(image_features, text_features, logit_scale):
    metrics = {}
    logits_per_image = logit_scale * image_features @ text_features.t()
    logits_per_text = logits_per_image.t()
    ground_truth = torch.arange(len(text_features), device=image_features.device).view(-1, 1)
    for name, logit in {"image_to_text": logits_per_image, "text_to_image": logits_per_text}.items():
        ranking = torch.argsort(logit, descending=True)
        preds = torch.where(ranking == ground_truth)[1].cpu().numpy()
        metrics[f"{name}_mean_rank"] = preds.mean() + 1
        for k in (1, 5, 10):
            metrics[f"{name}_R@{k}"] = np.mean(preds < k)
    return metrics


def evaluate(model, dataloader, epoch, device):
    model.eval()
    all_image_features, all_text_features = [], []
    cumulative_loss = 0.0
    num_elements = 0
    with torch.no_grad():
        for images, texts in dataloader:
            images = images.to(device, non_blocking=True)
            texts = texts.to(device, non_blocking=True)
            image_features, text_features, logit_scale = model(images, texts)
            all_image_features.append(image_features.cpu())
            all_text_features.append(text_features.cpu())
            logits = logit_scale.mean() * image_features @ text_features.t()
            labels = torch.arange(len(images), device=device)
            loss = (torch.nn.functional.cross_entropy(logits, labels)
                    + torch.nn.functional.cross_entropy(logits.t(), labels)) / 2
            cumulative_loss += loss.item() * len(images)
            num_elements += len(images)
        metrics = get_metrics(
            torch.cat(all_image_features), torch.cat(all_text_features), logit_scale.mean().cpu()
        )
    metrics["val_loss"] = cumulative_loss / num_elements
    logging.info(f"Eval epoch {epoch}: " + " ".join(f"{k}: {v:.4f}" for k, v in metrics.items()))
    return metrics
