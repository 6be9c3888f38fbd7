# Source: https://github.com/fungtion/DANN/blob/master/train/test.py
# Report: DANN domain-adaptation repo: test() reloads the epoch checkpoint, calls my_net.eval() and runs every test batch through the model with autograd on (no no_grad anywhere), once per domain per epoch
# Shape: the forward under eval records the feature extractor, the gradient-reversal node and both classifier heads for a backward that never comes (peak per batch); the accuracy counter uses .data so nothing grows
# Expect: TML003 line 83
import os

import numpy as np
import torch
from torch import nn
from torch.autograd import Function


class ReverseLayerF(Function):
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.neg() * ctx.alpha, None


class CNNModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.feature = nn.Sequential(
            nn.Conv2d(3, 64, 5), nn.BatchNorm2d(64), nn.MaxPool2d(2), nn.ReLU(True),
            nn.Conv2d(64, 50, 5), nn.BatchNorm2d(50), nn.Dropout2d(), nn.MaxPool2d(2), nn.ReLU(True))
        self.class_classifier = nn.Sequential(
            nn.Linear(800, 100), nn.ReLU(True), nn.Linear(100, 10), nn.LogSoftmax(dim=1))
        self.domain_classifier = nn.Sequential(
            nn.Linear(800, 100), nn.ReLU(True), nn.Linear(100, 2), nn.LogSoftmax(dim=1))

    def forward(self, input_data, alpha):
        input_data = input_data.expand(input_data.shape[0], 3, 28, 28)
        feature = self.feature(input_data).view(-1, 800)
        reverse_feature = ReverseLayerF.apply(feature, alpha)
        return self.class_classifier(feature), self.domain_classifier(reverse_feature)


def train_epoch(my_net, optimizer, loader_source, loader_target, epoch, n_epoch):
    loss_class = nn.NLLLoss().cuda()
    loss_domain = nn.NLLLoss().cuda()
    len_dataloader = min(len(loader_source), len(loader_target))
    source_iter, target_iter = iter(loader_source), iter(loader_target)
    for i in range(len_dataloader):
        p = float(i + epoch * len_dataloader) / n_epoch / len_dataloader
        alpha = 2.0 / (1.0 + np.exp(-10 * p)) - 1
        s_img, s_label = next(source_iter)
        my_net.zero_grad()
        s_img, s_label = s_img.cuda(), s_label.cuda()
        domain_label = torch.zeros(len(s_label), dtype=torch.long, device="cuda")
        class_output, domain_output = my_net(input_data=s_img, alpha=alpha)
        err_s_label = loss_class(class_output, s_label)
        err_s_domain = loss_domain(domain_output, domain_label)

        t_img, _ = next(target_iter)
        t_img = t_img.cuda()
        domain_label = torch.ones(len(t_img), dtype=torch.long, device="cuda")
        _, domain_output = my_net(input_data=t_img, alpha=alpha)
        err_t_domain = loss_domain(domain_output, domain_label)
        err = err_t_domain + err_s_domain + err_s_label
        err.backward()
        optimizer.step()
        print("epoch %d [%d/%d] err_s_label %f err_s_domain %f err_t_domain %f" % (
            epoch, i + 1, len_dataloader, err_s_label.item(), err_s_domain.item(), err_t_domain.item()))


def test(dataloader, model_root, dataset_name, epoch):
    alpha = 0
    path = os.path.join(model_root, "mnist_mnistm_model_epoch_%d.pth" % epoch)
    my_net = torch.load(path, map_location="cpu", weights_only=False)
    my_net = my_net.eval()
    my_net = my_net.cuda()

    n_total = 0
    n_correct = 0
    data_target_iter = iter(dataloader)
    for _ in range(len(dataloader)):
        t_img, t_label = next(data_target_iter)
        t_img, t_label = t_img.cuda(), t_label.cuda()
        class_output, _ = my_net(input_data=t_img, alpha=alpha)  # expect: TML003
        pred = class_output.data.max(1, keepdim=True)[1]
        n_correct += pred.eq(t_label.data.view_as(pred)).cpu().sum()
        n_total += len(t_label)

    accu = n_correct.item() * 1.0 / n_total
    print("epoch: %d, accuracy of the %s dataset: %f" % (epoch, dataset_name, accu))
    return accu
