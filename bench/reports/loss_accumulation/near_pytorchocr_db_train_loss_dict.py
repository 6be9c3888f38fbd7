# Source: https://github.com/WenmuZhou/PytorchOCR/blob/0358cfe1bfe64e3cb3437e16f79b7cdd64b8da7f/tools/det_train.py
# Report: PytorchOCR's DB text-detection trainer reads the total loss out of the loss dict, sums it per epoch into train_loss (reset each epoch) and rewrites every sub-loss of the per-step dict with .item() for the log line; evaluation runs under torch.no_grad()
# Shape: as in the repository: train_loss += loss_dict['loss'].item(), sub-losses converted in place in the per-step dict, eval outputs go straight to the post-processor under no_grad and only metric dicts are appended
# Expect: near-miss: must be silent
import time

import torch
from tqdm import tqdm


def evaluate(net, val_loader, to_use_device, logger, post_process, metric):
    logger.info('start evaluate')
    net.eval()
    raw_metrics = []
    total_frame = 0.0
    total_time = 0.0
    with torch.no_grad():
        for batch_data in tqdm(val_loader):
            start = time.time()
            output = net.forward(batch_data['img'].to(to_use_device))
            boxes, scores = post_process(output, batch_data['shape'], is_output_polygon=metric.is_output_polygon)
            total_frame += batch_data['img'].size()[0]
            total_time += time.time() - start
            raw_metrics.append(metric(batch_data, (boxes, scores)))
    metrics = metric.gather_measure(raw_metrics)
    net.train()
    return {'recall': metrics['recall'].avg, 'precision': metrics['precision'].avg,
            'hmean': metrics['fmeasure'].avg}


def train(net, optimizer, loss_func, train_loader, eval_loader, to_use_device,
          train_options, logger, post_process, metric, adjust_learning_rate, base_lr):
    all_step = len(train_loader)
    all_iters = all_step * train_options['epochs']
    global_step = 0
    for epoch in range(train_options['epochs']):
        net.train()
        train_loss = 0.
        start = time.time()
        for i, batch_data in enumerate(train_loader):
            current_lr = adjust_learning_rate(optimizer, base_lr, global_step, all_iters, 0.9)
            for key, value in batch_data.items():
                if isinstance(value, torch.Tensor):
                    batch_data[key] = value.to(to_use_device)
            optimizer.zero_grad()
            output = net.forward(batch_data['img'])
            loss_dict = loss_func(output, batch_data)
            loss_dict['loss'].backward()
            optimizer.step()
            # statistic loss for print
            train_loss += loss_dict['loss'].item()
            loss_str = 'loss: {:.4f} - '.format(loss_dict.pop('loss').item())
            for idx, (key, value) in enumerate(loss_dict.items()):
                loss_dict[key] = value.item()
                loss_str += '{}: {:.4f} '.format(key, loss_dict[key])
            if (i + 1) % train_options['print_interval'] == 0:
                logger.info(f"[{epoch}/{train_options['epochs']}] - [{i + 1}/{all_step}] - "
                            f"lr:{current_lr} - {loss_str}- time:{time.time() - start:.4f}")
                start = time.time()
            global_step += 1
        logger.info(f'train_loss: {train_loss / len(train_loader)}')
        if (epoch + 1) % train_options['val_interval'] == 0:
            eval_dict = evaluate(net, eval_loader, to_use_device, logger, post_process, metric)
            logger.info(f"hmean: {eval_dict['hmean']}")
