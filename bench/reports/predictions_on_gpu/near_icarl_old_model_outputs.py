# Source: https://github.com/DRSAD/iCaRL/issues/1
# Report: iCaRL.py _get_old_model_output as in the repository: the old model's per-sample outputs are cached as `.cpu().numpy()` arrays (the "move it to the CPU" answer in the issue)
# Shape: same dict of per-index old-model targets filled across the loader, but each entry is a host numpy copy, so no GPU storage outlives its batch
# Expect: near-miss: must be silent

import torch.nn as nn
import torch
from torchvision import transforms
import numpy as np
from torch.nn import functional as F
import torch.optim as optim
from myNetwork import network
from iCIFAR100 import iCIFAR100
from torch.utils.data import DataLoader

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


def get_one_hot(target, num_class):
    one_hot = torch.zeros(target.shape[0], num_class).to(device)
    one_hot = one_hot.scatter(dim=1, index=target.long().view(-1, 1), value=1.)
    return one_hot


class iCaRLmodel:

    def __init__(self, numclass, feature_extractor, batch_size, task_size, memory_size, epochs, learning_rate):
        self.epochs = epochs
        self.learning_rate = learning_rate
        self.model = network(numclass, feature_extractor)
        self.exemplar_set = []
        self.numclass = numclass
        self.old_model = None
        self.old_model_output = None
        self.train_transform = transforms.Compose([transforms.RandomCrop((32, 32), padding=4),
                                                   transforms.RandomHorizontalFlip(p=0.5),
                                                   transforms.ToTensor(),
                                                   transforms.Normalize((0.5071, 0.4867, 0.4408), (0.2675, 0.2565, 0.2761))])
        self.train_dataset = iCIFAR100('dataset', transform=self.train_transform, download=True)
        self.batchsize = batch_size
        self.memory_size = memory_size
        self.task_size = task_size
        self.train_loader = None

    def beforeTrain(self):
        self.model.eval()
        classes = [self.numclass - self.task_size, self.numclass]
        self.train_dataset.getTrainData(classes, self.exemplar_set)
        self.train_loader = DataLoader(dataset=self.train_dataset, shuffle=True, batch_size=self.batchsize)
        if self.numclass > self.task_size:
            self.old_model_output = self._get_old_model_output(self.train_loader)
            self.model.Incremental_learning(self.numclass)
        self.model.train()
        self.model.to(device)

    def _get_old_model_output(self, dataloader):
        x = {}
        for step, (indexs, imgs, labels) in enumerate(dataloader):
            imgs, labels = imgs.to(device), labels.to(device)
            with torch.no_grad():
                old_model_output = torch.sigmoid(self.old_model(imgs))
            for i in range(len(indexs)):
                x[indexs[i].item()] = old_model_output[i].cpu().numpy()
        return x

    def _compute_loss(self, indexs, imgs, target):
        output = self.model(imgs)
        target = get_one_hot(target, self.numclass)
        if self.old_model_output is None:
            return F.binary_cross_entropy_with_logits(output, target)
        old_target = torch.tensor(np.array([self.old_model_output[index.item()] for index in indexs])).to(device)
        old_task_size = old_target.shape[1]
        target[..., :old_task_size] = old_target
        return F.binary_cross_entropy_with_logits(output, target)

    def train(self):
        opt = optim.SGD(self.model.parameters(), lr=self.learning_rate, weight_decay=0.00001)
        for epoch in range(self.epochs):
            if epoch == 48:
                opt = optim.SGD(self.model.parameters(), lr=self.learning_rate / 5, weight_decay=0.00001)
            elif epoch == 62:
                opt = optim.SGD(self.model.parameters(), lr=self.learning_rate / 25, weight_decay=0.00001)
            for step, (indexs, images, target) in enumerate(self.train_loader):
                images, target = images.to(device), target.to(device)
                loss_value = self._compute_loss(indexs, images, target)
                opt.zero_grad()
                loss_value.backward()
                opt.step()
                print('epoch:%d,step:%d,loss:%.3f' % (epoch, step, loss_value.item()))
