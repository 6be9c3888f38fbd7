# Source: https://github.com/facebookresearch/votenet/issues/30
# Report: the periodic evaluation pass ran the detector without torch.no_grad(); the maintainer's fix wrapped the forward in no_grad (about 2.3 GB less GPU memory at batch size 8)
# Shape: same evaluate helper, forward and criterion under torch.no_grad(); stats still accumulated with .item() into a dict that outlives the loop
# Expect: near-miss: must be silent
import torch

from detection.ap_helper import APCalculator, parse_groundtruths, parse_predictions
from detection.loss import get_loss

EVAL_CFG = {"use_3d_nms": True, "nms_iou": 0.25, "cls_nms": True, "conf_thresh": 0.05}


def log_string(msg, fout=None):
    print(msg)
    if fout is not None:
        fout.write(msg + "\n")


def evaluate_one_epoch(net, loader, dataset_config, device, epoch, fout=None):
    stat_dict = {}
    ap_calculator = APCalculator(ap_iou_thresh=0.25, class2type_map=dataset_config.class2type)
    net.eval()
    for batch_idx, batch in enumerate(loader):
        for key in batch:
            batch[key] = batch[key].to(device)

        inputs = {"point_clouds": batch["point_clouds"]}
        with torch.no_grad():
            end_points = net(inputs)
            for key in batch:
                end_points[key] = batch[key]
            loss, end_points = get_loss(end_points, dataset_config)

        for key in end_points:
            if "loss" in key or "acc" in key or "ratio" in key:
                stat_dict[key] = stat_dict.get(key, 0.0) + end_points[key].item()

        pred_map = parse_predictions(end_points, EVAL_CFG)
        gt_map = parse_groundtruths(end_points, EVAL_CFG)
        ap_calculator.step(pred_map, gt_map)

    n = float(batch_idx + 1)
    for key in sorted(stat_dict):
        log_string(f"eval mean {key}: {stat_dict[key] / n:f}", fout)
    for key, value in ap_calculator.compute_metrics().items():
        log_string(f"eval {key}: {value:f}", fout)
    return stat_dict["loss"] / n


def run(net, optimizer, train_one_epoch, loaders, dataset_config, device, max_epoch):
    best = float("inf")
    for epoch in range(max_epoch):
        train_one_epoch(net, optimizer, loaders["train"], epoch)
        if epoch == 0 or epoch % 10 == 9:
            best = min(best, evaluate_one_epoch(net, loaders["test"], dataset_config, device, epoch))
    return best
