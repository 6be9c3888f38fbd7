# Source: https://github.com/weihua916/powerful-gnns/blob/master/main.py
# Report: GIN graph classification evaluates in minibatches "to avoid memory overflow", but the helper runs the model after model.eval() with autograd on and only detaches the output afterwards
# Shape: pass_data_iteratively() calls model.eval() then model(batch_graphs) with no grad-disabled context: every minibatch records a full graph that is thrown away by .detach(), and the detached outputs stay on the GPU until concatenated
# Expect: TML003 line 52; TML004 line 52
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
    labels = torch.LongTensor([g.label for g in graphs]).to(device)
    correct = pred.eq(labels.view_as(pred)).sum().cpu().item()
    return correct / float(len(graphs))


def pass_data_iteratively(model, graphs, minibatch_size=64):
    # minibatched forward for scoring (no backprop happens here)
    model.eval()
    chunks = []
    order = np.arange(len(graphs))
    for start in range(0, len(graphs), minibatch_size):
        idx = order[start:start + minibatch_size]
        if len(idx) == 0:
            continue
        chunks.append(model([graphs[j] for j in idx]).detach())  # expect: TML003, TML004
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
