# Source: https://github.com/bubbliiiing/yolo3-pytorch/issues/3
# Report: train.py accumulated `total_loss += loss` (pre-0.4 style) in the epoch loop, which keeps every step's graph history and can exhaust GPU memory; fix is `+= loss.item()`
# Shape: fixed as suggested in the issue: the epoch-level total_loss receives loss.item(); the per-iteration losses list and the no_grad validation sum are unchanged
# Expect: near-miss: must be silent
import time

import torch


def fit_one_epoch(net, yolo_losses, optimizer, epoch, epoch_size, epoch_size_val, gen, gen_val, total_epochs):
    total_loss = 0
    val_loss = 0
    net.train()
    for iteration in range(epoch_size):
        start_time = time.time()
        images, targets = next(gen)
        images = torch.from_numpy(images).float().cuda()
        targets = [torch.from_numpy(ann).float() for ann in targets]

        optimizer.zero_grad()
        outputs = net(images)
        losses = []
        for i in range(3):
            loss_item = yolo_losses[i](outputs[i], targets)
            losses.append(loss_item[0])
        loss = sum(losses)
        loss.backward()
        optimizer.step()

        total_loss += loss.item()
        waste_time = time.time() - start_time
        print("Epoch %d/%d iter %d/%d || Total Loss: %.4f || %.4fs/step"
              % (epoch + 1, total_epochs, iteration, epoch_size, total_loss / (iteration + 1), waste_time))

    net.eval()
    for iteration in range(epoch_size_val):
        images_val, targets_val = next(gen_val)
        with torch.no_grad():
            images_val = torch.from_numpy(images_val).float().cuda()
            targets_val = [torch.from_numpy(ann).float() for ann in targets_val]
            outputs = net(images_val)
            losses = []
            for i in range(3):
                losses.append(yolo_losses[i](outputs[i], targets_val)[0])
            val_loss += sum(losses)

    print("Total Loss: %.4f || Val Loss: %.4f" % (total_loss / (epoch_size + 1), val_loss / (epoch_size_val + 1)))
    torch.save(net.state_dict(), "logs/Epoch%d-Total_Loss%.4f-Val_Loss%.4f.pth"
               % (epoch + 1, total_loss / (epoch_size + 1), val_loss / (epoch_size_val + 1)))
