# Source: https://github.com/huggingface/pytorch-image-models/blob/0041cb7ba4ab3b8b3bce5bf105300f0ee57ffc22/inference.py
# Report: timm's batch inference script writes top-k ids/probs of every image in a folder; upstream converts each batch with .cpu().numpy(), here the probabilities are kept as device tensors and concatenated once at the end
# Shape: under inference_mode the model output is not graph-attached, but all_outputs.append(output.float()) keeps every batch's top-k probs on the GPU (the loader's prefetcher already put inputs there) until the torch.cat after the loop
# Expect: TML004 line 65
import argparse
import time
from contextlib import suppress
from functools import partial

import numpy as np
import pandas as pd
import torch

from timm.data import create_dataset, create_loader, resolve_data_config
from timm.models import create_model
from timm.utils import AverageMeter

parser = argparse.ArgumentParser(description="PyTorch ImageNet Inference")
parser.add_argument("--data-dir", metavar="DIR")
parser.add_argument("--model", "-m", default="resnet50")
parser.add_argument("-b", "--batch-size", default=256, type=int)
parser.add_argument("--checkpoint", default="", type=str)
parser.add_argument("--device", default="cuda", type=str)
parser.add_argument("--amp", action="store_true", default=False)
parser.add_argument("--topk", default=1, type=int)
parser.add_argument("--include-index", action="store_true", default=False)
parser.add_argument("--log-freq", default=10, type=int)
parser.add_argument("--results-file", default="topk.csv", type=str)


def main():
    args = parser.parse_args()
    device = torch.device(args.device)
    amp_autocast = suppress
    if args.amp:
        amp_autocast = partial(torch.autocast, device_type=device.type, dtype=torch.float16)

    model = create_model(args.model, pretrained=not args.checkpoint, checkpoint_path=args.checkpoint)
    data_config = resolve_data_config(vars(args), model=model)
    model = model.to(device)
    model.eval()

    dataset = create_dataset(root=args.data_dir, name="", split="validation")
    loader = create_loader(dataset, batch_size=args.batch_size, use_prefetcher=True, num_workers=2,
                           device=device, **data_config)

    top_k = min(args.topk, model.num_classes)
    batch_time = AverageMeter()
    end = time.time()
    all_indices = []
    all_outputs = []
    with torch.inference_mode():
        for batch_idx, (input, _) in enumerate(loader):
            with amp_autocast():
                output = model(input)

            output = output.softmax(-1)

            if top_k:
                output, indices = output.topk(top_k)
                np_indices = indices.cpu().numpy()
                if args.include_index:
                    all_indices.append(np_indices)

            all_outputs.append(output.float())  # expect: TML004

            batch_time.update(time.time() - end)
            end = time.time()
            if batch_idx % args.log_freq == 0:
                print("Predict: [{0}/{1}] Time {bt.val:.3f} ({bt.avg:.3f})".format(
                    batch_idx, len(loader), bt=batch_time))

    all_indices = np.concatenate(all_indices, axis=0) if all_indices else None
    all_outputs = torch.cat(all_outputs, dim=0).cpu().numpy().astype(np.float32)
    filenames = loader.dataset.filenames(basename=True)

    data_dict = {"filename": filenames, "prob": list(all_outputs)}
    if all_indices is not None:
        data_dict["index"] = list(all_indices)
    pd.DataFrame(data=data_dict).to_csv(args.results_file, index=False)


if __name__ == "__main__":
    main()
