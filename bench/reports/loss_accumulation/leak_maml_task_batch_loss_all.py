# Source: https://github.com/wyharveychen/CloserLookFewShot/blob/e03aca8a2d01c9b5861a5a816cd5d3fdfc47cd45/methods/maml.py
# Report: audit of the few-shot MAML train_loop: the repo reads loss.data[0] for its running average; the variant it avoided adds the attached task loss itself, so avg_loss chains every task's loss node for the whole epoch (loss_all is correctly consumed and reset)
# Shape: same meta-batch list, backpropagated and reset every n_task tasks, but the running average is avg_loss = avg_loss + loss on the attached tensor
# Expect: TML001 line 24
import torch


class MetaBatchTrainer:
    """Drives a MAML learner whose set_forward_loss() runs the inner-loop adaptation."""

    def __init__(self, learner, n_task=4, print_freq=10):
        self.learner = learner
        self.n_task = n_task
        self.print_freq = print_freq

    def train_loop(self, epoch, train_loader, optimizer):
        avg_loss = 0.0
        task_count = 0
        loss_all = []
        optimizer.zero_grad()
        for i, (x, _) in enumerate(train_loader):
            self.learner.n_query = x.size(1) - self.learner.n_support
            loss = self.learner.set_forward_loss(x.cuda())
            avg_loss = avg_loss + loss  # expect: TML001
            loss_all.append(loss)
            task_count += 1
            if task_count == self.n_task:
                loss_q = torch.stack(loss_all).sum(0)
                loss_q.backward()
                optimizer.step()
                task_count = 0
                loss_all = []
            optimizer.zero_grad()
            if i % self.print_freq == 0:
                print(f"Epoch {epoch:d} | Batch {i:d}/{len(train_loader):d} | Loss {avg_loss / (i + 1):f}")
        return avg_loss / max(len(train_loader), 1)


def run(learner, base_loader, val_loader, adapt_and_score, epochs=400, lr=1e-3):
    trainer = MetaBatchTrainer(learner)
    optimizer = torch.optim.Adam(learner.parameters(), lr=lr)
    best_acc = 0.0
    for epoch in range(epochs):
        learner.train()
        trainer.train_loop(epoch, base_loader, optimizer)
        learner.eval()
        acc = adapt_and_score(learner, val_loader)  # MAML needs grad to adapt at test time
        if acc > best_acc:
            best_acc = acc
            torch.save({"epoch": epoch, "state": learner.state_dict()}, "best_model.tar")
    return best_acc
