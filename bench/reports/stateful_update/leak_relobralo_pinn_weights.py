# Source: https://github.com/Khadrawi/-ReLoBRaLo_PyTorch/blob/25d3b4d7d7daf44355d3a045659898c197420033/ReLoBRalo_PyTorch.py
# Report: audited ReLoBRaLo loss balancing for PINNs: the adaptive weights are an exponential moving average kept on the balancer (self.lam) across training steps; the implementation detaches the softmax targets so the average carries no graph.
# Shape: this rewrite drops the .detach() on lambs_hat/lambs0_hat, so each new weight is built from this step's PDE/BC losses and the previous weight: self.lam chains every step's graph to the last one.
# Expect: TML005 line 33
import torch


class RELOBRALO():
    def __init__(self, num_losses, T=0.1, alpha=0.999, rho=0.999, device='cuda'):
        self.num_losses = num_losses
        self.l0 = {"l0_" + str(i): torch.tensor([1.], device=device) for i in range(num_losses)}
        self.lam = {"lam_" + str(i): torch.tensor([1.], device=device) for i in range(num_losses)}
        self.l = {"l_" + str(i): torch.tensor([1.], device=device) for i in range(num_losses)}
        self.T = torch.tensor(T, dtype=torch.float32, device=device)
        self.rho = torch.tensor(rho, device=device)
        self.alpha = alpha

    def set_l0(self, loss_list):
        for i in range(self.num_losses):
            self.l0['l0_' + str(i)] = loss_list[i].detach().reshape(1)

    def __call__(self, loss_list):
        rho = torch.bernoulli(self.rho)
        lambs_hat = torch.softmax(torch.cat([loss_list[i] / (self.l['l_' + str(i)] * self.T + 1e-12)
                                             for i in range(self.num_losses)]), dim=0) * self.num_losses
        lambs0_hat = torch.softmax(torch.cat([loss_list[i] / (self.l0['l0_' + str(i)] * self.T + 1e-12)
                                              for i in range(self.num_losses)]), dim=0) * self.num_losses
        lambs = [rho * self.alpha * self.lam['lam_' + str(i)]
                 + (1 - rho) * self.alpha * lambs0_hat[i]
                 + (1 - self.alpha) * lambs_hat[i] for i in range(self.num_losses)]
        loss = torch.sum(torch.cat([lambs[i] * loss_list[i] for i in range(self.num_losses)]))
        for i in range(self.num_losses):
            self.lam['lam_' + str(i)] = lambs[i]  # expect: TML005
            self.l['l_' + str(i)] = loss_list[i].detach().reshape(1)
        return loss


def train_pinn(pinn, optimizer, x_f, x_b, u_b, epochs):
    relobralo = RELOBRALO(num_losses=2)
    for epoch in range(epochs):
        optimizer.zero_grad()
        residual = pinn.residual(x_f)
        loss_f = torch.mean(residual ** 2)
        loss_b = torch.mean((pinn(x_b) - u_b) ** 2)
        balanced_loss = relobralo([loss_b.reshape(1), loss_f.reshape(1)])
        balanced_loss.backward()
        optimizer.step()
        if epoch == 0:
            relobralo.set_l0([loss_b, loss_f])
        if epoch % 100 == 0:
            print(f"epoch {epoch}: loss_b={loss_b.item():.3e} loss_f={loss_f.item():.3e}")
