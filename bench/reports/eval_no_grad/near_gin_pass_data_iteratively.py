# Source: https://github.com/weihua916/powerful-gnns/blob/master/main.py
# Report: GIN graph classification scores graphs in minibatches; fixed variant of the repository helper with the forward under torch.no_grad()
# Shape: the minibatch forward runs inside torch.no_grad(), chunks are moved to the CPU and concatenated once after the loop; training loss is accumulated as a detached numpy value
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

criterion = nn.CrossEntropyLoss()


def train(args, model, device, train_graphs, optimizer, epoch):
    model.train()
    loss_accum = 0
    for it in range(args.iters_per_epoch):
        picked = np.random.permutation(len(train_graphs))[:args.batch_size]
        batch_graph = [train_graphs[i] for i in picked]
        output = model(batch_graph)
        labels = torch.LongTensor([g.label for g in batch_graph]).to(device)

        loss = criterion(output, labels)
        if optimizer is not None:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

        loss = loss.detach().cpu().numpy()
        loss_accum += loss

    avg = loss_accum / args.iters_per_epoch
    print("epoch %d training loss: %f" % (epoch, avg))
    return avg


def accuracy_of(output, graphs, device):
    pred = output.max(1, keepdim=True)[1]
    labels = torch.LongTensor([g.label for g in graphs]).to(output.device)
    correct = pred.eq(labels.view_as(pred)).sum().cpu().item()
    return correct / float(len(graphs))


def pass_data_iteratively(model, graphs, minibatch_size=64):
    # minibatched forward for scoring (no backprop happens here)
    model.eval()
    chunks = []
    order = np.arange(len(graphs))
    with torch.no_grad():
        for start in range(0, len(graphs), minibatch_size):
            idx = order[start:start + minibatch_size]
            if len(idx) == 0:
                continue
            chunks.append(model([graphs[j] for j in idx]).cpu())
    return torch.cat(chunks, 0)


def test(model, device, train_graphs, test_graphs):
    model.eval()
    acc_train = accuracy_of(pass_data_iteratively(model, train_graphs), train_graphs, device)
    acc_test = accuracy_of(pass_data_iteratively(model, test_graphs), test_graphs, device)
    print("accuracy train: %f test: %f" % (acc_train, acc_test))
    return acc_train, acc_test


def main(args, model, device, train_graphs, test_graphs):
    optimizer = optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.decay)
    scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=50, gamma=0.5)
    for epoch in range(1, args.epochs + 1):
        avg_loss = train(args, model, device, train_graphs, optimizer, epoch)
        scheduler.step()
        acc_train, acc_test = test(model, device, train_graphs, test_graphs)
        if args.filename:
            with open(args.filename, "w") as f:
                f.write("%f %f %f\n" % (avg_loss, acc_train, acc_test))
