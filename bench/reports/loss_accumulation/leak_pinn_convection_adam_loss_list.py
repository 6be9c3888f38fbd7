# Source: https://github.com/poetrilin/pinn-related/blob/075ee54148c2baf57d30e7341588ddec8885f7a5/convection/train.py
# Report: 1-D convection PINN trained with Adam then L-BFGS; the repository logs loss.item() per epoch and early-stops on the last two logged values. This variant logs the loss tensor itself in the Adam phase.
# Shape: loss comes from loss_function (autograd.grad with create_graph=True over the collocation set); loss_list is bound before the 10k-epoch loop and receives the graph-attached tensor every epoch; the early-stop subtraction still works on tensors, so nothing fails.
# Expect: TML001 line 59
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
BETA = 40.0


class MLP(nn.Module):
    def __init__(self, width=64, depth=4):
        super().__init__()
        layers, d_in = [], 2
        for _ in range(depth):
            layers += [nn.Linear(d_in, width), nn.Tanh()]
            d_in = width
        layers.append(nn.Linear(d_in, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, xt):
        return self.net(xt)


def loss_function(model, x, t, x_lower, t_lower, x_left, t_left, x_right, t_right):
    x.requires_grad_(True)
    t.requires_grad_(True)
    u = model(torch.cat((x, t), dim=1))
    u_x, u_t = torch.autograd.grad(u, [x, t], grad_outputs=torch.ones_like(u), create_graph=True)
    loss_res = torch.mean((u_t + BETA * u_x) ** 2)
    loss_ic = torch.mean((model(torch.cat((x_lower, t_lower), dim=1)) - torch.sin(x_lower)) ** 2)
    loss_bc = torch.mean((model(torch.cat((x_left, t_left), dim=1)) - model(torch.cat((x_right, t_right), dim=1))) ** 2)
    return loss_res + 0.1 * loss_bc + 0.05 * loss_ic


def generate_data(n_inside, n_boundary, x_max=2 * torch.pi, t_max=1.0):
    x = (x_max * torch.rand(n_inside, 1)).to(device)
    t = (t_max * torch.rand(n_inside, 1)).to(device)
    x_lower = (x_max * torch.rand(n_boundary, 1)).to(device)
    t_lower = torch.zeros(n_boundary, 1, device=device)
    x_left = torch.zeros(n_boundary, 1, device=device)
    t_left = (t_max * torch.rand(n_boundary, 1)).to(device)
    x_right = x_max * torch.ones(n_boundary, 1, device=device)
    t_right = (t_max * torch.rand(n_boundary, 1)).to(device)
    return x, t, x_lower, t_lower, x_left, t_left, x_right, t_right


def train_adam(model, data, *, epochs=10000, lr=5e-4, verbose=True):
    loss_list = []
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, epochs, eta_min=1e-8)
    for epoch in range(1, epochs + 1):
        optimizer.zero_grad()
        loss = loss_function(model, *data)
        loss.backward()
        optimizer.step()
        scheduler.step()
        loss_list.append(loss)  # expect: TML001
        if epoch % 1000 == 0 and verbose:
            print(f"Adam epoch {epoch}, loss {loss.item():.6e}")
        if epoch >= 1000 and abs(loss_list[-1] - loss_list[-2]) < 1e-16:
            print(f"early stop at epoch {epoch}")
            break
    return model, loss_list


def train_lbfgs(model, data, *, epochs=2000, lr=1e-5, verbose=True):
    loss_list = []
    optimizer = torch.optim.LBFGS(model.parameters(), lr=lr, line_search_fn="strong_wolfe")

    def closure():
        optimizer.zero_grad()
        loss = loss_function(model, *data)
        loss.backward()
        return loss

    for epoch in range(1, epochs + 1):
        optimizer.step(closure)
        loss = closure()
        loss_list.append(loss.item())
        if epoch % 500 == 0 and verbose:
            print(f"LBFGS epoch {epoch}, loss {loss.item():.6e}")
        if epoch >= 50 and abs(loss_list[-1] - loss_list[-2]) < 1e-17:
            break
    return model, loss_list


if __name__ == "__main__":
    model = MLP().to(device)
    data = generate_data(1500, 300)
    model, _ = train_adam(model, data)
    model, lbfgs_losses = train_lbfgs(model, data)
    torch.save(model.state_dict(), f"pinn-beta-{BETA}.pth")
