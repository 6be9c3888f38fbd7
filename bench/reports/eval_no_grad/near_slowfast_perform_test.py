# Source: https://github.com/facebookresearch/SlowFast/issues/109
# Report: perform_test() in test_net.py ran the model on every test clip without torch.no_grad(), so testing needed far more GPU memory; a maintainer agreed no_grad should be used
# Shape: same test loop, but perform_test is decorated with @torch.no_grad() (the fix the maintainer agreed to), so the forward records no graph
# Expect: near-miss: must be silent
import numpy as np
import torch


@torch.no_grad()
def perform_test(test_loader, model, test_meter, cfg, writer=None):
    # Enable eval mode.
    model.eval()
    test_meter.iter_tic()

    for cur_iter, (inputs, labels, video_idx, meta) in enumerate(test_loader):
        if cfg.NUM_GPUS:
            if isinstance(inputs, (list,)):
                for i in range(len(inputs)):
                    inputs[i] = inputs[i].cuda(non_blocking=True)
            else:
                inputs = inputs.cuda(non_blocking=True)
            labels = labels.cuda()
            video_idx = video_idx.cuda()
        test_meter.data_toc()

        # Perform the forward pass.
        preds = model(inputs)

        if cfg.NUM_GPUS:
            preds = preds.cpu()
            labels = labels.cpu()
            video_idx = video_idx.cpu()

        test_meter.iter_toc()
        # Update and log stats.
        test_meter.update_stats(preds.detach(), labels.detach(), video_idx.detach())
        test_meter.log_iter_stats(cur_iter)
        test_meter.iter_tic()

    all_preds = test_meter.video_preds.clone().detach()
    all_labels = test_meter.video_labels
    if writer is not None:
        writer.plot_eval(preds=all_preds, labels=all_labels)
    if cfg.TEST.SAVE_RESULTS_PATH:
        np.save(cfg.TEST.SAVE_RESULTS_PATH, all_preds.numpy())

    test_meter.finalize_metrics()
    return test_meter
