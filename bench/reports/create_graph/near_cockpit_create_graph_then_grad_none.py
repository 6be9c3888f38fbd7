# Source: https://github.com/f-dangel/cockpit/issues/30
# Report: Tracking the Hessian's max eigenvalue with Cockpit required loss.backward(create_graph=...) inside a DQN update, which raised the create_graph reference-cycle warning; the user asked whether resetting every param.grad to None afterwards is what is needed.
# Shape: the DQN update still backpropagates with create_graph on the tracked steps, but after optimizer.step() every parameter's .grad is set to None, which breaks the parameter/gradient cycle before the next step.
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F
from backpack import extend
from cockpit import Cockpit, quantities
from cockpit.utils import schedules


class DQNLearner:
    def __init__(self, q_net, target_net, lr=1e-3, gamma=0.99, batch_size=64):
        self.q_net = extend(q_net)
        self.target_net = target_net
        self.gamma = gamma
        self.batch_size = batch_size
        self.optimizer = torch.optim.Adam(self.q_net.parameters(), lr=lr)
        self.loss_fn = extend(torch.nn.MSELoss(reduction="mean"))
        self.cockpit = Cockpit(self.q_net.parameters(),
                               quantities=[quantities.HessMaxEV(schedules.linear(interval=3))])

    def update(self, batch, global_step):
        obs, actions, rewards, next_obs, dones = batch
        with torch.no_grad():
            next_q = self.target_net(next_obs).max(dim=1).values
            targets = rewards + self.gamma * (1 - dones) * next_q
        q = self.q_net(obs).gather(1, actions.unsqueeze(1)).squeeze(1)
        losses = F.mse_loss(q, targets, reduction="none")
        loss = self.loss_fn(q, targets)

        self.optimizer.zero_grad()
        info = {"batch_size": self.batch_size, "individual_losses": losses,
                "loss": loss, "optimizer": self.optimizer}
        with self.cockpit(global_step, info=info):
            loss.backward(create_graph=self.cockpit.create_graph(global_step))
        self.optimizer.step()

        for param in self.q_net.parameters():
            param.grad = None
        return loss.item()
