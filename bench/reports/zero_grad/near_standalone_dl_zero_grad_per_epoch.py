# Source: https://github.com/heartcored98/Standalone-DeepLearning/issues/11
# Report: the course's CIFAR-10 CNN lab called optimizer.zero_grad() once per epoch, before the batch loop, so gradients from every earlier batch were added into each update; the author confirmed the mistake and fixed it in all labs.
# Shape: the corrected lab: optimizer.zero_grad() moved into the batch loop, right before the forward/backward of each batch.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


def train(net, partition, optimizer, criterion, args):
    trainloader = torch.utils.data.DataLoader(partition["train"], batch_size=args.train_batch_size,
                                              shuffle=True, num_workers=2)
    net.train()
    correct, total, train_loss = 0, 0, 0.0
    for i, (inputs, labels) in enumerate(trainloader):
        optimizer.zero_grad()
        inputs, labels = inputs.cuda(), labels.cuda()
        outputs = net(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()

        train_loss += loss.item()
        _, predicted = torch.max(outputs.data, 1)
        total += labels.size(0)
        correct += (predicted == labels).sum().item()
    return net, train_loss / len(trainloader), 100 * correct / total


def validate(net, partition, criterion, args):
    valloader = torch.utils.data.DataLoader(partition["val"], batch_size=args.test_batch_size,
                                            shuffle=False, num_workers=2)
    net.eval()
    correct, total, val_loss = 0, 0, 0.0
    with torch.no_grad():
        for inputs, labels in valloader:
            inputs, labels = inputs.cuda(), labels.cuda()
            outputs = net(inputs)
            val_loss += criterion(outputs, labels).item()
            _, predicted = torch.max(outputs.data, 1)
            total += labels.size(0)
            correct += (predicted == labels).sum().item()
    return val_loss / len(valloader), 100 * correct / total


def experiment(net, partition, args):
    net.cuda()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(net.parameters(), lr=args.lr, momentum=0.9, weight_decay=args.l2)
    for epoch in range(args.epoch):
        net, train_loss, train_acc = train(net, partition, optimizer, criterion, args)
        val_loss, val_acc = validate(net, partition, criterion, args)
        print("Epoch {}, Acc(train/val): {:2.2f}/{:2.2f}, Loss(train/val) {:2.2f}/{:2.2f}".format(
            epoch, train_acc, val_acc, train_loss, val_loss))
