# Source: https://github.com/AidenDurrant/SimCLR-Pytorch/pull/7
# Report: during linear fine-tuning the per-epoch evaluate() ran the frozen encoder and the classification head with gradients enabled; the PR wrapped evaluation in torch.no_grad()
# Shape: the same evaluate() as a decorated no-grad function, so both forwards run without autograd
# Expect: near-miss: must be silent
import logging

import torch
import torch.nn as nn
from tqdm import tqdm


@torch.no_grad()
def evaluate(encoder, mlp, dataloaders, mode, epoch, args):
    criterion = nn.CrossEntropyLoss().cuda()

    encoder.eval()
    mlp.eval()

    sample_count = 0
    run_loss = 0
    run_top1 = 0.0
    run_top5 = 0.0

    if args.print_progress:
        eval_dataloader = tqdm(dataloaders[mode])
    else:
        eval_dataloader = dataloaders[mode]

    for i, (inputs, target) in enumerate(eval_dataloader):
        inputs = inputs.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)

        h = encoder(inputs)
        output = mlp(h)

        loss = criterion(output, target)
        torch.cuda.synchronize()

        sample_count += inputs.size(0)
        run_loss += loss.item()

        predicted = output.argmax(1)
        run_top1 += (predicted == target).sum().item() / target.size(0)

        _, output_topk = output.topk(5, 1, True, True)
        run_top5 += (output_topk == target.view(-1, 1).expand_as(output_topk)
                     ).sum().item() / target.size(0)

    epoch_valid_loss = run_loss / len(dataloaders[mode])
    epoch_valid_acc = run_top1 / len(dataloaders[mode])
    epoch_valid_acc_top5 = run_top5 / len(dataloaders[mode])

    if args.print_progress:
        logging.info('\n[%s] loss: %.4f,\t acc: %.4f,\t acc_top5: %.4f \n',
                     mode, epoch_valid_loss, epoch_valid_acc, epoch_valid_acc_top5)
        if mode != 'test':
            args.writer.add_scalars('finetune_epoch_loss', {mode: epoch_valid_loss}, epoch + 1)
            args.writer.add_scalars('finetune_epoch_acc', {mode: epoch_valid_acc}, epoch + 1)

    return epoch_valid_loss, epoch_valid_acc, epoch_valid_acc_top5
