# Source: https://github.com/SanoScience/CXR-FL/blob/93b1410d1ebeb4964428deafef9a349e2a06cadf/segmentation/common.py
# Report: the CXR-FL centralized FL evaluation helper validate(), made grad-free with @torch.no_grad() (the fix the audit calls for)
# Shape: same closure called once per round and same val-loader loop; the decorator disables autograd for the whole helper and only .item() floats leave the loop
# Expect: near-miss: must be silent
import logging
import os
from collections import OrderedDict

import torch
from segmentation_models_pytorch import UnetPlusPlus
from torch.utils.data import DataLoader

from segmentation.data_loader import LungSegDataset
from segmentation.loss_functions import DiceBCELoss

logger = logging.getLogger(__name__)
DEVICE = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
history = {"loss": [], "jacc": []}


def jaccard(outputs, targets):
    outputs = outputs.view(outputs.size(0), -1)
    targets = targets.view(targets.size(0), -1)
    inter = (outputs * targets).sum(1)
    union = (outputs + targets).sum(1) - inter
    return ((inter + 0.001) / (union + 0.001)).mean()


@torch.no_grad()
def validate(net, val_loader, device):
    criterion = DiceBCELoss()
    net.eval()
    val_running_loss = 0.0
    val_running_jac = 0.0
    for batch_idx, (images, masks) in enumerate(val_loader):
        images = images.to(device)
        masks = masks.to(device)

        outputs_masks = net(images)
        loss = criterion(outputs_masks, masks)
        val_running_loss += loss.item()
        jac = jaccard(outputs_masks.round(), masks)
        val_running_jac += jac.item()

    return val_running_loss / len(val_loader), val_running_jac / len(val_loader)


def weights_to_state_dict(net, weights):
    keys = list(net.state_dict().keys())
    return OrderedDict({k: torch.tensor(w) for k, w in zip(keys, weights)})


def get_eval_fn(net, images_path, masks_path, image_size=1024, batch_size=2):
    test_ds = LungSegDataset(path_to_images=images_path, path_to_masks=masks_path,
                             image_size=image_size, mode="test")
    test_loader = DataLoader(test_ds, batch_size=batch_size, num_workers=8, pin_memory=True)

    def evaluate(weights):
        net.load_state_dict(weights_to_state_dict(net, weights), strict=True)
        val_loss, val_jacc = validate(net, test_loader, DEVICE)
        if history["jacc"] and val_jacc > max(history["jacc"]):
            os.makedirs("best_model", exist_ok=True)
            torch.save(net.state_dict(), f"best_model/unet_jacc_{val_jacc:.3f}.pt")
        history["loss"].append(val_loss)
        history["jacc"].append(val_jacc)
        logger.info("round eval: loss %.4f jaccard %.4f", val_loss, val_jacc)
        return val_loss, {"val_jacc": val_jacc}

    return evaluate


def build_server_net():
    net = UnetPlusPlus("efficientnet-b4", in_channels=1, classes=1, activation="sigmoid")
    return net.to(DEVICE)
