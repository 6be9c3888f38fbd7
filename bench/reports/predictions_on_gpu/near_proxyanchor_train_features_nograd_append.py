# Source: https://github.com/leftthomas/ProxyAnchor/blob/53255743520060938b8bbdbed39b8edebcda8084/train.py
# Report: audited bug: train() appends the per-batch embedding `feature` inside `with torch.no_grad():`, but the embedding was produced outside no_grad, so every kept tensor still carries its grad_fn; the list is concatenated into data_base['train_features'] after the epoch
# Shape: fixed: the embedding is detached and moved to the host before it joins the epoch-level list; labels go to the host too; one torch.cat after the loop
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F
from torch.optim import Adam
from torch.utils.data import DataLoader
from tqdm import tqdm

from model import Model
from utils import ImageReader, ProxyLoss, recall, set_bn_eval


def build_loader(data_path, data_name, batch_size):
    train_set = ImageReader(data_path, data_name, 'train')
    return train_set, DataLoader(train_set, batch_size, shuffle=True, num_workers=8)


def log_step(bar, epoch, num_epochs, total_loss, total_correct, total_num):
    bar.set_description('Train Epoch {}/{} - Loss:{:.4f} - Acc:{:.2f}%'.format(
        epoch, num_epochs, total_loss / total_num, total_correct / total_num * 100))


def train(net, optim, loader, criterion, data_base, epoch, num_epochs):
    net.train()
    # keep backbone batch-norm statistics frozen
    net.backbone.apply(set_bn_eval)
    total_loss, total_correct, total_num = 0.0, 0.0, 0
    features, targets = [], []
    data_bar = tqdm(loader, dynamic_ncols=True)
    for inputs, labels in data_bar:
        inputs, labels = inputs.cuda(), labels.cuda()
        feature, output = net(inputs)
        loss = criterion(output, labels)
        optim.zero_grad()
        loss.backward()
        optim.step()

        with torch.no_grad():
            pred = torch.argmax(output, dim=-1)
            total_loss += loss.item() * inputs.size(0)
            total_correct += torch.sum(pred == labels).item()
            total_num += inputs.size(0)
            targets.append(labels.cpu())
            features.append(feature.detach().cpu())
            log_step(data_bar, epoch, num_epochs, total_loss, total_correct, total_num)

    data_base['train_features'] = torch.cat(features, dim=0)
    data_base['train_labels'] = torch.cat(targets, dim=0)
    data_base['train_proxies'] = F.normalize(net.fc.weight.data, dim=-1)
    return total_loss / total_num, total_correct / total_num * 100


def main(data_path='/home/data', data_name='car', batch_size=64, num_epochs=20):
    train_set, train_loader = build_loader(data_path, data_name, batch_size)
    model = Model('resnet50', 512, len(train_set.class_to_idx)).cuda()
    optimizer = Adam(model.parameters(), lr=1e-4)
    criterion = ProxyLoss()
    data_base = {}
    for epoch in range(1, num_epochs + 1):
        train_loss, train_acc = train(model, optimizer, train_loader, criterion,
                                      data_base, epoch, num_epochs)
        print(epoch, train_loss, train_acc, data_base['train_features'].shape)


if __name__ == '__main__':
    main()
