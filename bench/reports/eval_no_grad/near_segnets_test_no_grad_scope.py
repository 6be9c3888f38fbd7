# Source: https://github.com/xiaoyufenfei/Efficient-Segmentation-Networks/pull/5
# Report: test.py runs out of memory; the PR "makes torch.no_grad effective" because the context only wrapped the .cuda() copy, not the forward
# Shape: the fix: the forward pass sits inside the no_grad block with the input copy; only numpy arrays derived via .cpu() are kept across batches
# Expect: near-miss: must be silent
import os
import time

import numpy as np
import torch


def get_iou(data_list, num_classes):
    conf = np.zeros((num_classes, num_classes), dtype=np.int64)
    for gt, pred in data_list:
        keep = gt < num_classes
        conf += np.bincount(num_classes * gt[keep].astype(int) + pred[keep],
                            minlength=num_classes ** 2).reshape(num_classes, num_classes)
    iu = np.diag(conf) / (conf.sum(0) + conf.sum(1) - np.diag(conf) + 1e-10)
    return iu.mean(), iu


def save_predict(output, gt, name, save_dir):
    os.makedirs(save_dir, exist_ok=True)
    np.save(os.path.join(save_dir, name + ".npy"), output)


def test(args, test_loader, model):
    """Evaluate one checkpoint; returns mean IoU and per-class IoU."""
    model.eval()
    total_batches = len(test_loader)

    data_list = []
    for i, (inp, label, size, name) in enumerate(test_loader):
        start_time = time.time()
        with torch.no_grad():
            input_var = inp.cuda()
            output = model(input_var)
        torch.cuda.synchronize()
        print("[%d/%d]  time: %.2f" % (i + 1, total_batches, time.time() - start_time))
        output = output.cpu().data[0].numpy()
        gt = np.asarray(label[0].numpy(), dtype=np.uint8)
        output = np.asarray(np.argmax(output.transpose(1, 2, 0), axis=2), dtype=np.uint8)
        data_list.append([gt.flatten(), output.flatten()])
        if args.save:
            save_predict(output, gt, name[0], args.save_seg_dir)

    return get_iou(data_list, args.classes)


def test_best(args, test_loader, model, ckpt_dir, last_epoch):
    scores = []
    for ep in range(last_epoch - 9, last_epoch + 1):
        state = torch.load(os.path.join(ckpt_dir, "model_%d.pth" % ep), map_location="cpu")
        model.load_state_dict(state["model"])
        miou, _ = test(args, test_loader, model)
        scores.append(miou)
    return int(np.argmax(scores)) + last_epoch - 9, max(scores)
