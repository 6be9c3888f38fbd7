# Source: https://github.com/mit-han-lab/spvnas/issues/108
# Report: evaluate.py on SemanticKITTI hit CUDA out of memory because the inference loop had no no_grad around the forward pass
# Shape: fixed variant: the same evaluation loop runs inside with torch.no_grad(), so no activations are saved for backward
# Expect: near-miss: must be silent
import argparse

import torch
from tqdm import tqdm

from core import builder
from core.callbacks import MeanIoU
from model_zoo import minkunet, spvcnn, spvnas_specialized


def build_model(name):
    if "spvnas" in name.lower():
        return spvnas_specialized(name)
    if "spvcnn" in name.lower():
        return spvcnn(name)
    if "mink" in name.lower():
        return minkunet(name)
    raise NotImplementedError(name)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("config", metavar="FILE")
    parser.add_argument("--name", type=str)
    args = parser.parse_args()

    dataset = builder.make_dataset()
    test_loader = torch.utils.data.DataLoader(
        dataset["test"], batch_size=1, num_workers=4, pin_memory=True,
        collate_fn=dataset["test"].collate_fn)

    model = build_model(args.name).cuda()
    model.eval()
    miou = MeanIoU(num_classes=19, ignore_label=255)
    miou.before_epoch()

    with torch.no_grad():
        for feed_dict in tqdm(test_loader, desc="eval"):
            _inputs = {k: v.cuda() for k, v in feed_dict.items() if "name" not in k}
            inputs = _inputs["lidar"]
            outputs = model(inputs)

            invs = feed_dict["inverse_map"]
            all_labels = feed_dict["targets_mapped"]
            _outputs, _targets = [], []
            for idx in range(invs.C[:, -1].max() + 1):
                cur_scene_pts = (inputs.C[:, -1] == idx).cpu().numpy()
                cur_inv = invs.F[invs.C[:, -1] == idx].cpu().numpy()
                cur_label = (all_labels.C[:, -1] == idx).cpu().numpy()
                _outputs.append(outputs[cur_scene_pts][cur_inv].argmax(1))
                _targets.append(all_labels.F[cur_label])
            miou.after_step({"outputs": torch.cat(_outputs, 0), "targets": torch.cat(_targets, 0)})

    miou.after_epoch()


if __name__ == "__main__":
    main()
