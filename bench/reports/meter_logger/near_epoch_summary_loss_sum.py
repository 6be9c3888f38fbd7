# Source: https://github.com/McGregorWwww/UDTransNet/issues/21
# Report: GPU memory kept rising during training until OOM; the running loss_sum used for the printed epoch summary accumulated the loss tensor instead of loss.item()
# Shape: same running totals and dices list, but every value is converted with .item() before it is summed or stored, as the thread's fix does
# Expect: near-miss: must be silent
import time

import torch


def print_summary(epoch, i, nb_batch, loss, fold, kfold, average_loss, average_time,
                  dice, average_dice, mode, lr, logger):
    summary = "   [{}] Fold: [{}/{}] Epoch: [{}][{}/{}]  ".format(mode, fold, kfold, epoch, i, nb_batch)
    summary += "Loss:{:.3f} (Avg {:.4f}) ".format(loss, average_loss)
    summary += "Dice:{:.4f} (Avg {:.4f}) ".format(dice, average_dice)
    if mode == "Train":
        summary += "LR {:.2e}   ".format(lr)
    summary += "(AvgTime {:.1f})".format(average_time)
    logger.info(summary)


def train_one_epoch(loader, model, criterion, optimizer, writer, epoch, lr_scheduler,
                    fold, kfold, logger, batch_size=4, print_frequency=10):
    logging_mode = "Train" if model.training else "Val"
    end = time.time()
    time_sum, loss_sum = 0, 0
    dice_sum = 0.0
    dices = []
    for i, (sampled_batch, names) in enumerate(loader, 1):
        images, masks = sampled_batch["image"].cuda(), sampled_batch["label"].cuda()

        preds = model(images)
        out_loss = criterion(preds, masks.long(), softmax=True)

        if model.training:
            optimizer.zero_grad()
            out_loss.backward()
            optimizer.step()

        train_dice = criterion._show_dice(preds, masks.long(), softmax=True).item()
        batch_time = time.time() - end
        dices.append(train_dice)

        time_sum += len(images) * batch_time
        loss_sum += len(images) * out_loss.item()
        dice_sum += len(images) * train_dice

        seen = batch_size * (i - 1) + len(images)
        average_loss = loss_sum / seen
        average_time = time_sum / seen
        train_dice_avg = dice_sum / seen
        end = time.time()

        if i % print_frequency == 0:
            print_summary(epoch + 1, i, len(loader), out_loss, fold, kfold,
                          average_loss, average_time, train_dice, train_dice_avg,
                          logging_mode, lr=min(g["lr"] for g in optimizer.param_groups), logger=logger)
        if writer is not None:
            writer.add_scalar(logging_mode + "_dice", train_dice, epoch * len(loader) + i)

    if lr_scheduler is not None:
        lr_scheduler.step()
    return average_loss, train_dice_avg
