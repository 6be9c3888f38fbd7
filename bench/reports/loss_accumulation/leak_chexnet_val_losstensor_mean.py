# Source: https://github.com/zoogzog/chexnet/issues/12
# Report: OOM at the end of the first epoch; epochVal summed the BCE loss tensor (losstensorMean += losstensor) to feed the LR scheduler, and the volatile Variables no longer disable grad
# Shape: a static-method trainer whose validation helper folds each batch's attached loss tensor into a running total that it returns to the caller (scheduler.step)
# Expect: TML001 line 43; TML003 line 40
import torch
import torch.nn as nn
from torch.optim.lr_scheduler import ReduceLROnPlateau


class ChestTrainer:

    @staticmethod
    def epoch_train(model, loader, optimizer, criterion):
        model.train()
        for batch_id, (images, target) in enumerate(loader):
            images = images.cuda(non_blocking=True)
            target = target.cuda(non_blocking=True)
            output = model(images)
            loss_value = criterion(output, target)
            optimizer.zero_grad()
            loss_value.backward()
            optimizer.step()

    @staticmethod
    def epoch_val(model, loader, criterion):
        model.eval()

        loss_val = 0.0
        loss_val_norm = 0
        loss_tensor_mean = 0

        for i, (images, target) in enumerate(loader):
            images = images.cuda(non_blocking=True)
            target = target.cuda(non_blocking=True)

            # torch.autograd.Variable(..., volatile=True) used to switch grad off here;
            # since 0.4 the flag is ignored, so this forward records a graph.
            var_input = torch.autograd.Variable(images)
            var_target = torch.autograd.Variable(target)
            var_output = model(var_input)  # expect: TML003

            loss_tensor = criterion(var_output, var_target)
            loss_tensor_mean += loss_tensor  # expect: TML001

            loss_val += loss_tensor.item()
            loss_val_norm += 1

        out_loss = loss_val / loss_val_norm
        loss_tensor_mean = loss_tensor_mean / loss_val_norm
        return out_loss, loss_tensor_mean

    @staticmethod
    def train(model, train_loader, val_loader, max_epoch, checkpoint_path):
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, weight_decay=1e-5)
        scheduler = ReduceLROnPlateau(optimizer, factor=0.1, patience=5, mode="min")
        criterion = nn.BCELoss()
        loss_min = 1e5
        for epoch_id in range(max_epoch):
            ChestTrainer.epoch_train(model, train_loader, optimizer, criterion)
            loss_val, loss_tensor = ChestTrainer.epoch_val(model, val_loader, criterion)
            scheduler.step(loss_tensor.item())
            if loss_val < loss_min:
                loss_min = loss_val
                torch.save({"epoch": epoch_id + 1, "state_dict": model.state_dict(),
                            "best_loss": loss_min}, checkpoint_path)
