# Source: https://github.com/dmlc/dgl/issues/5302
# Report: DGL maintainers note that most examples record the epoch loss with `total_loss += loss`, which adds total_loss to the autograd graph every step; the proposed fix is `total_loss += loss.detach()` (not .item(), to avoid a CPU-GPU sync)
# Shape: the proposed fix: the running epoch loss stays a device tensor but accumulates loss.detach(), so no graph is kept and no sync is forced per step
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F
from dgl.dataloading import DataLoader, NeighborSampler

from eval_utils import evaluate


def train(args, device, g, dataset, model, num_classes):
    train_idx = dataset.train_idx.to(device)
    val_idx = dataset.val_idx.to(device)
    sampler = NeighborSampler([10, 10, 10], prefetch_node_feats=["feat"],
                              prefetch_labels=["label"])
    use_uva = args.mode == "mixed"
    train_dataloader = DataLoader(g, train_idx, sampler, device=device, batch_size=1024,
                                  shuffle=True, drop_last=False, num_workers=0, use_uva=use_uva)
    val_dataloader = DataLoader(g, val_idx, sampler, device=device, batch_size=1024,
                                shuffle=True, drop_last=False, num_workers=0, use_uva=use_uva)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=5e-4)

    for epoch in range(10):
        model.train()
        total_loss = 0
        for it, (input_nodes, output_nodes, blocks) in enumerate(train_dataloader):
            x = blocks[0].srcdata["feat"]
            y = blocks[-1].dstdata["label"]
            y_hat = model(blocks, x)
            loss = F.cross_entropy(y_hat, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total_loss += loss.detach()
        acc = evaluate(model, g, val_dataloader, num_classes)
        print("Epoch {:05d} | Loss {:.4f} | Accuracy {:.4f} ".format(
            epoch, total_loss / (it + 1), acc.item()))
