# Source: https://discuss.pytorch.org/t/saving-and-loading-models-across-devices/177391
# Report: a model trained and saved on cuda:0 was "loaded on CPU" without map_location; nvidia-smi showed the checkpoint landing on cuda:0 anyway
# Shape: export helper loads the GPU-saved state_dict with a bare torch.load before copying it into a CPU model
# Expect: TML011 line 40
import torch
import torch.nn as nn
import torch.optim as optim


class ToyRegressor(nn.Module):
    def __init__(self, width=10):
        super().__init__()
        self.fc_in = nn.Linear(width, width)
        self.act = nn.ReLU()
        self.fc_out = nn.Linear(width, 1)

    def forward(self, x):
        return self.fc_out(self.act(self.fc_in(x)))


def train_on_gpu(path, device="cuda:0", epochs=10):
    model = ToyRegressor().to(device)
    loss_fn = nn.MSELoss()
    opt = optim.SGD(model.parameters(), lr=1e-3)
    for _ in range(epochs):
        x = torch.randn(20, 10).to(device)
        y = torch.randn(20, 1).to(device)
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    torch.save(model.state_dict(), path)
    return path


def load_for_cpu_serving(path):
    """Rebuild the regressor on the CPU box for the serving container."""
    cpu_model = ToyRegressor()
    # the storages come back on cuda:0, where they were saved from
    state = torch.load(path)  # expect: TML011
    cpu_model.load_state_dict(state)
    for name, tensor in state.items():
        print(name, tensor.device)
    return cpu_model.eval()


if __name__ == "__main__":
    ckpt = train_on_gpu("toy_regressor.pt")
    served = load_for_cpu_serving(ckpt)
    print(sum(p.numel() for p in served.parameters()))
