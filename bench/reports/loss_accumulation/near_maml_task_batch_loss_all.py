# Source: https://github.com/wyharveychen/CloserLookFewShot/blob/e03aca8a2d01c9b5861a5a816cd5d3fdfc47cd45/methods/maml.py
# Report: audit of the few-shot MAML train_loop: it appends every task's attached query loss to loss_all, but stacks and backpropagates the list every n_task tasks and then rebinds loss_all = []; the running average reads a detached value (loss.data[0] in the repo)
# Shape: a meta-batch list of attached task losses that is consumed by backward and reset inside the loop, next to a float running average fed with loss.item()
# Expect: near-miss: must be silent
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
            avg_loss = avg_loss + loss.item()
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
