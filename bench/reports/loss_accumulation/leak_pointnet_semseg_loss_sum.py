# Source: https://github.com/yanx27/Pointnet_Pointnet2_pytorch/pull/233
# Report: train_semseg.py summed the training loss tensor into `loss_sum` for the epoch log, keeping history for every batch (PR cites the PyTorch FAQ); fixed with `loss_sum += loss.item()`
# Shape: loss from a custom criterion module (with the transform-feature regulariser) summed into an epoch total; the evaluation pass below reuses the same `+=` under no_grad
# Expect: TML001 line 41
import numpy as np
import torch
from tqdm import tqdm

import provider


def run_epochs(classifier, criterion, optimizer, trainDataLoader, testDataLoader, weights, args, log_string,
               NUM_CLASSES, BATCH_SIZE, NUM_POINT):
    for epoch in range(args.epoch):
        num_batches = len(trainDataLoader)
        total_correct = 0
        total_seen = 0
        loss_sum = 0
        classifier = classifier.train()

        for i, (points, target) in tqdm(enumerate(trainDataLoader), total=len(trainDataLoader), smoothing=0.9):
            optimizer.zero_grad()
            points = points.data.numpy()
            points[:, :, :3] = provider.rotate_point_cloud_z(points[:, :, :3])
            points = torch.Tensor(points)
            points, target = points.float().cuda(), target.long().cuda()
            points = points.transpose(2, 1)

            seg_pred, trans_feat = classifier(points)
            seg_pred = seg_pred.contiguous().view(-1, NUM_CLASSES)
            batch_label = target.view(-1, 1)[:, 0].cpu().data.numpy()
            target = target.view(-1, 1)[:, 0]
            loss = criterion(seg_pred, target, trans_feat, weights)
            loss.backward()
            optimizer.step()

            pred_choice = seg_pred.cpu().data.max(1)[1].numpy()
            correct = np.sum(pred_choice == batch_label)
            total_correct += correct
            total_seen += (BATCH_SIZE * NUM_POINT)
            loss_sum += loss  # expect: TML001
        log_string('Training mean loss: %f' % (loss_sum / num_batches))
        log_string('Training accuracy: %f' % (total_correct / float(total_seen)))

        with torch.no_grad():
            num_batches = len(testDataLoader)
            loss_sum = 0
            classifier = classifier.eval()
            for i, (points, target) in tqdm(enumerate(testDataLoader), total=len(testDataLoader), smoothing=0.9):
                points = torch.Tensor(points.data.numpy())
                points, target = points.float().cuda(), target.long().cuda()
                points = points.transpose(2, 1)
                seg_pred, trans_feat = classifier(points)
                seg_pred = seg_pred.contiguous().view(-1, NUM_CLASSES)
                target = target.view(-1, 1)[:, 0]
                loss = criterion(seg_pred, target, trans_feat, weights)
                loss_sum += loss
            log_string('eval mean loss: %f' % (loss_sum / float(num_batches)))
