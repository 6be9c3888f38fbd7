# Source: https://github.com/KeenJerry/AutoDoom.Visual.Dial/blob/44fa511b905f378e8755b79215db435a012e6e1b/core/process.py
# Report: the repo keeps epoch loss in a module-level LossRecorder whose CUDA sum does self.sum += avg_loss * batch_size, and passes loss.detach() into it so the running sum never holds a graph
# Shape: as in the repo: the singleton recorder with a CUDA running sum is fed loss.detach() from the per-batch train helper and read with .item() at epoch end
# Expect: near-miss: must be silent
import logging
import time

import torch


class LossRecorder:
    def __init__(self):
        self.sum = torch.zeros(1).cuda()
        self.item_count = 0

    def reset(self):
        self.sum = torch.zeros(1).cuda()
        self.item_count = 0

    def update_loss(self, avg_loss, batch_size):
        self.sum += avg_loss * batch_size
        self.item_count += batch_size

    def get_avg_loss(self):
        return (self.sum / max(self.item_count, 1)).item()


train_loss_recorder = LossRecorder()
test_loss_recorder = LossRecorder()


def train_dialnet(dial_net, train_dataloader, optimizer, loss_function):
    dial_net.train()
    train_loss_recorder.reset()
    for index, batch in enumerate(train_dataloader):
        started = time.time()
        optimizer.zero_grad()

        image = batch[0].cuda()
        heatmap_label = batch[1].cuda()
        gt_points = batch[2]

        predict_heatmap, predict_tagmap = dial_net(image)
        del image

        # avg loss over the batch
        loss = loss_function(predict_heatmap, predict_tagmap, heatmap_label, gt_points)
        del heatmap_label, gt_points, predict_heatmap, predict_tagmap

        loss.backward()
        optimizer.step()

        train_loss_recorder.update_loss(loss.detach(), train_dataloader.batch_size)
        logging.info("\tBATCH %d, time %.2fs, loss %.4f", index, time.time() - started, loss.item())
        del loss

    return train_loss_recorder.get_avg_loss()


def test_dialnet(dial_net, test_dataloader, loss_function):
    dial_net.eval()
    test_loss_recorder.reset()
    with torch.no_grad():
        for batch in test_dataloader:
            image = batch[0].cuda()
            heatmap_label = batch[1].cuda()
            predict_heatmap, predict_tagmap = dial_net(image)
            loss = loss_function(predict_heatmap, predict_tagmap, heatmap_label, batch[2])
            test_loss_recorder.update_loss(loss.detach(), test_dataloader.batch_size)
    return test_loss_recorder.get_avg_loss()
