# Source: https://github.com/HiLab-git/PyMIC/blob/8bcebd62ad4360d7dc5143907f56dd793dd5e304/pymic/net_run/agent_seg.py
# Report: PyMIC medical segmentation agent, one edit away from the repo: the .item() is dropped from the running train_loss sum
# Shape: train_loss (bound before the loop, never backwarded) = train_loss + loss chains every step's loss node for iter_valid steps and ends up as a tensor in the returned dict; the argmax-based Dice and the no_grad validation stay correct
# Expect: TML001 line 53
import numpy as np
import torch


def get_soft_label(label_argmax, class_num, dtype):
    shape = list(label_argmax.shape)
    shape[1] = class_num
    onehot = torch.zeros(shape, device=label_argmax.device).scatter_(1, label_argmax, 1)
    return onehot.type(dtype)


def get_classwise_dice(pred, gt, eps=1e-5):
    inter = (pred * gt).sum(dim=0)
    return (2.0 * inter + eps) / (pred.sum(dim=0) + gt.sum(dim=0) + eps)


def flatten(pred, gt, class_num):
    return pred.permute(0, 2, 3, 1).reshape(-1, class_num), gt.permute(0, 2, 3, 1).reshape(-1, class_num)


class SegmentationAgent(object):
    def __init__(self, config, net, optimizer, loss_fn, train_loader, valid_loader, inferer, device):
        self.config, self.net, self.optimizer = config, net, optimizer
        self.loss_fn, self.inferer, self.device = loss_fn, inferer, device
        self.train_loader, self.valid_loader = train_loader, valid_loader
        self.trainIter = iter(train_loader)
        self.tensor_type = torch.float32

    def training(self):
        class_num = self.config['network']['class_num']
        iter_valid = self.config['training']['iter_valid']
        train_loss = 0
        train_dice_list = []
        self.net.train()
        for it in range(iter_valid):
            try:
                data = next(self.trainIter)
            except StopIteration:
                self.trainIter = iter(self.train_loader)
                data = next(self.trainIter)
            inputs = data['image'].float().to(self.device)
            labels_prob = data['label_prob'].float().to(self.device)

            self.optimizer.zero_grad()
            outputs = self.net(inputs)
            loss = self.loss_fn(outputs, labels_prob)
            loss.backward()
            self.optimizer.step()
            train_loss = train_loss + loss  # expect: TML001

            if isinstance(outputs, (tuple, list)):
                outputs = outputs[0]
            outputs_argmax = torch.argmax(outputs, dim=1, keepdim=True)
            soft_out = get_soft_label(outputs_argmax, class_num, self.tensor_type)
            soft_out, labels_flat = flatten(soft_out, labels_prob, class_num)
            dice_list = get_classwise_dice(soft_out, labels_flat)
            train_dice_list.append(dice_list.cpu().numpy())
        train_avg_loss = train_loss / iter_valid
        train_cls_dice = np.asarray(train_dice_list).mean(axis=0)
        return {'loss': train_avg_loss, 'avg_fg_dice': train_cls_dice[1:].mean(), 'class_dice': train_cls_dice}

    def validation(self):
        class_num = self.config['network']['class_num']
        valid_loss_list, valid_dice_list = [], []
        with torch.no_grad():
            self.net.eval()
            for data in self.valid_loader:
                inputs = data['image'].float().to(self.device)
                labels_prob = data['label_prob'].float().to(self.device)
                outputs = self.inferer.run(self.net, inputs)
                loss = self.loss_fn(outputs, labels_prob)
                valid_loss_list.append(loss.item())
                outputs_argmax = torch.argmax(outputs, dim=1, keepdim=True)
                soft_out = get_soft_label(outputs_argmax, class_num, self.tensor_type)
                for i in range(inputs.shape[0]):
                    p, g = flatten(soft_out[i:i + 1], labels_prob[i:i + 1], class_num)
                    valid_dice_list.append(get_classwise_dice(p, g).cpu().numpy())
        valid_cls_dice = np.asarray(valid_dice_list).mean(axis=0)
        return {'loss': np.asarray(valid_loss_list).mean(), 'avg_fg_dice': valid_cls_dice[1:].mean(),
                'class_dice': valid_cls_dice}
