# Source: https://github.com/joseph-nagel/physics-informed-nn/blob/7dcc5b206709f5b3d19e5c9d734a773bc2b9b4a4/pinn_utils/train.py
# Report: audit of a PINN (1D heat equation) trainer (correct code): test_pinn() must evaluate the physics loss with autograd enabled (the PDE residual needs du/dt and d2u/dx2 via autograd.grad), and it returns loss.detach().item(), so the val history holds floats
# Shape: same trainer; the eval helper runs in eval mode without no_grad on purpose (no_grad would break the input derivatives) and hands back a Python float that the epoch loop appends
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class HeatPINN(nn.Module):
    def __init__(self, hidden=32, alpha=0.1, length=1.0):
        super().__init__()
        self.alpha, self.length = alpha, length
        self.net = nn.Sequential(nn.Linear(2, hidden), nn.Tanh(),
                                 nn.Linear(hidden, hidden), nn.Tanh(),
                                 nn.Linear(hidden, 1))
        self.criterion = nn.MSELoss()

    def forward(self, t, x):
        return self.net(torch.cat((t, x), dim=1))

    def pde_loss(self, t, x):
        t = t.clone().requires_grad_(True)
        x = x.clone().requires_grad_(True)
        u = self(t, x)
        u_t = torch.autograd.grad(u.sum(), t, create_graph=True)[0]
        u_x = torch.autograd.grad(u.sum(), x, create_graph=True)[0]
        u_xx = torch.autograd.grad(u_x.sum(), x, create_graph=True)[0]
        residual = u_t - self.alpha * u_xx
        return self.criterion(residual, torch.zeros_like(residual))

    def physics_loss(self, pde_t, pde_x, bc_t, ic_x):
        zeros_bc = torch.zeros_like(bc_t)
        bc = self.criterion(self(bc_t, zeros_bc), zeros_bc) \
            + self.criterion(self(bc_t, torch.full_like(bc_t, self.length)), zeros_bc)
        ic_target = torch.sin(torch.pi * ic_x / self.length)
        ic = self.criterion(self(torch.zeros_like(ic_x), ic_x), ic_target)
        return self.pde_loss(pde_t, pde_x) + 0.5 * bc + ic


def test_pinn(pinn, colloc):
    """Physics loss on held-out collocation points.

    The PDE residual needs input derivatives, so autograd stays enabled here.
    """
    pinn.eval()
    loss = pinn.physics_loss(**colloc)
    return loss.detach().item()


def train_pinn(pinn, optimizer, num_epochs, train_colloc, val_colloc, print_every=100):
    train_losses, val_losses = [], []

    # initial test
    val_losses.append(test_pinn(pinn, val_colloc))

    for epoch in range(num_epochs):
        pinn.train()
        loss = pinn.physics_loss(**train_colloc)

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        train_losses.append(loss.detach().item())

        # validation physics loss for the learning curve
        val_loss = test_pinn(pinn, val_colloc)
        val_losses.append(val_loss)

        if (epoch + 1) % print_every == 0:
            print(f"epoch {epoch + 1}: train {train_losses[-1]:.2e}, val {val_loss:.2e}")

    return {"train_loss": train_losses, "val_loss": val_losses}


def make_colloc(n, device):
    return {"pde_t": torch.rand(n, 1, device=device), "pde_x": torch.rand(n, 1, device=device),
            "bc_t": torch.rand(n // 4, 1, device=device), "ic_x": torch.rand(n // 4, 1, device=device)}


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    pinn = HeatPINN().to(device)
    opt = torch.optim.Adam(pinn.parameters(), lr=1e-3)
    history = train_pinn(pinn, opt, 5000, make_colloc(4096, device), make_colloc(4096, device))
