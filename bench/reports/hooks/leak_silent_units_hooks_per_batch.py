# Source: https://github.com/DavidCarlyn/fooling-feature-visualizations/blob/07f146a3c3f86ca0dcbf645bc87190db4dcf126e/count_silent_units.py
# Report: audited idiom: forward hooks on every Conv/BN/ReLU/Linear record which units ever fire over the ImageNet train loader; the original registers them once, before the data loop
# Shape: the registration is moved into the per-batch loop (re-armed after reset_module_counts), so each batch adds one more closure per module and the old handles are overwritten, never removed
# Expect: TML007 line 58
from argparse import ArgumentParser

import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from torchvision.datasets import ImageFolder
from tqdm import tqdm

from models.utils import load_pretrained_model
from transforms import imgnet_train_transforms

HOOK_TYPES = (nn.Conv2d, nn.BatchNorm2d, nn.ReLU, nn.Linear)


def get_args():
    parser = ArgumentParser()
    parser.add_argument("--train_data", type=str, required=True)
    parser.add_argument("--model", type=str, default="resnet18")
    parser.add_argument("--batch_size", type=int, default=128)
    return parser.parse_args()


if __name__ == "__main__":
    args = get_args()
    dset = ImageFolder(args.train_data, transform=imgnet_train_transforms())
    train_dloader = DataLoader(dset, num_workers=8, batch_size=args.batch_size, shuffle=True)
    model = load_pretrained_model(args.model, num_classes=1000).cuda()
    model.eval()

    silent_activations = {}
    module_counts = {}

    def check_silent(name):
        def hook(module, inputs, output):
            flat = output.view(len(output), -1)
            key = f"{name}_{module_counts[name]}"
            if key not in silent_activations:
                silent_activations[key] = torch.zeros(flat.shape[1], dtype=torch.bool).cuda()
            fired = (flat != 0).sum(0) > 0
            silent_activations[key] = torch.logical_or(silent_activations[key], fired)
            module_counts[name] += 1
        return hook

    def compute_num_silent_units():
        return sum(int((~v).sum()) for v in silent_activations.values())

    hooks = {}
    with torch.no_grad():
        for imgs, _ in (pbar := tqdm(train_dloader)):
            imgs = imgs.cuda()
            for name, module in model.named_modules():
                if isinstance(module, HOOK_TYPES):
                    module_counts[name] = 0
                    hooks[name] = module.register_forward_hook(check_silent(name))  # expect: TML007
            _ = model(imgs)
            silent_units = compute_num_silent_units()
            pbar.set_description(f"Silent units: {silent_units}")

    print(f"Total # of silent units in {args.model}: {silent_units}")
