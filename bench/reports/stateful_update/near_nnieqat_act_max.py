# Source: https://github.com/aovoc/nnieqat-pytorch/issues/13
# Report: after adding nnieqat quantization-aware training, GPU memory was not released after each backward and grew until OOM; the activation-range tracker `module.activation_max_value = torch.max(torch.max(torch.abs(output)), module.activation_max_value...)` folded the live activation into a running max kept on the module; the reporter fixed it with `output.detach()`
# Shape: the same QuantReLU wrapper with the reporter's fix: the running max is built from output.detach(), so the buffer never holds a graph (the fake-quant itself goes through .data)
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class QuantAndDeQuantGPU:
    """Stand-in for the GFPQ quant/dequant handle: rewrites tensor.data in place."""

    def __init__(self, bit_width=8):
        self._bit_width = bit_width

    def __call__(self, tensor):
        qmax = 2 ** (self._bit_width - 1) - 1
        scale = tensor.data.abs().max().clamp(min=1e-8) / qmax
        tensor.data = torch.round(tensor.data / scale) * scale
        return tensor


_QUANT_HANDLE = QuantAndDeQuantGPU()


class QuantReLU(nn.Module):
    """ReLU whose output is fake-quantized against a running activation range."""

    def __init__(self):
        super().__init__()
        self.act = nn.ReLU()
        self.register_buffer("activation_max_value", torch.zeros(1))

    def forward(self, x):
        output = self.act(x)
        output_type = output.dtype
        self.activation_max_value = torch.max(torch.max(torch.abs(output.detach())), self.activation_max_value.to(output_type))
        pad = torch.ones_like(output[0]).unsqueeze(0) * self.activation_max_value
        tensor_t = torch.cat((output, pad))
        output.data = _QUANT_HANDLE(tensor_t.float())[:-1].to(output_type)
        return output


class QuantNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, 3, padding=1)
        self.relu1 = QuantReLU()
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.relu2 = QuantReLU()
        self.fc = nn.Linear(64, num_classes)

    def forward(self, x):
        x = F.max_pool2d(self.relu1(self.conv1(x)), 2)
        x = F.adaptive_avg_pool2d(self.relu2(self.conv2(x)), 1)
        return self.fc(torch.flatten(x, 1))


def train_qat(model, train_loader, epochs=10, lr=0.01, device="cuda"):
    model = model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        model.train()
        running_loss = 0.0
        for step, (images, labels) in enumerate(train_loader):
            images, labels = images.to(device), labels.to(device)
            optimizer.zero_grad()
            loss = criterion(model(images), labels)
            loss.backward()
            optimizer.step()
            running_loss += loss.item()
            if step % 100 == 99:
                print(f"[{epoch + 1}, {step + 1}] loss: {running_loss / 100:.3f}")
                running_loss = 0.0
    return model
