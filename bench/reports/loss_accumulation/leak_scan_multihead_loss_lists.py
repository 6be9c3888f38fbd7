# Source: https://github.com/wvangansbeke/Unsupervised-Classification/blob/57dff9223303ad1d906cb1e54c0a04a78dee720d/utils/train_utils.py
# Report: audited SCAN clustering loop with several heads: per-head total/consistency/entropy losses are collected in lists that the repository re-creates every iteration, logging only .item() means
# Shape: repository code with the safeguard removed: the consistency/entropy lists are hoisted out of the batch loop to log an epoch average, so every head's graph-attached loss of every step is kept until the epoch ends
# Expect: TML001 line 35; TML001 line 36
import torch


def scan_train(train_loader, model, criterion, optimizer, epoch, update_cluster_head_only=False):
    if update_cluster_head_only:
        model.eval()
    else:
        model.train()

    consistency_loss, entropy_loss = [], []
    for i, batch in enumerate(train_loader):
        anchors = batch["anchor"].cuda(non_blocking=True)
        neighbors = batch["neighbor"].cuda(non_blocking=True)

        if update_cluster_head_only:
            with torch.no_grad():
                anchors_features = model(anchors, forward_pass="backbone")
                neighbors_features = model(neighbors, forward_pass="backbone")
            anchors_output = model(anchors_features, forward_pass="head")
            neighbors_output = model(neighbors_features, forward_pass="head")
        else:
            anchors_output = model(anchors)
            neighbors_output = model(neighbors)

        total_loss = []
        for anchors_output_subhead, neighbors_output_subhead in zip(anchors_output, neighbors_output):
            total_loss_, consistency_loss_, entropy_loss_ = criterion(
                anchors_output_subhead, neighbors_output_subhead
            )
            total_loss.append(total_loss_)
            consistency_loss.append(consistency_loss_)  # expect: TML001
            entropy_loss.append(entropy_loss_)  # expect: TML001

        total_loss = torch.sum(torch.stack(total_loss, dim=0))

        optimizer.zero_grad()
        total_loss.backward()
        optimizer.step()

        if i % 25 == 0:
            print("Epoch: [{}][{}/{}] total {:.4e}".format(epoch, i, len(train_loader), total_loss.item()))

    mean_consistency = torch.stack(consistency_loss).mean().item()
    mean_entropy = torch.stack(entropy_loss).mean().item()
    print("Epoch {}: consistency {:.4f} entropy {:.4f}".format(epoch, mean_consistency, mean_entropy))
    return mean_consistency, mean_entropy
