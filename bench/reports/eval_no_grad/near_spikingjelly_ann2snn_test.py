# Source: https://github.com/fangwei123456/spikingjelly/issues/425
# Report: testing an ann2snn-converted segmentation UNet with functional.multi_step_forward over T=16 repeated inputs blew GPU memory up by ~20 GB on the first batch; no backward is ever called in that loop
# Shape: same test helper with the T-step simulation and loss inside torch.no_grad(), so no activations are saved for a backward that never comes
# Expect: near-miss: must be silent
import torch
from spikingjelly.activation_based import ann2snn, functional


def test_ann2snn(model, train_dataloader, criterion, num_classes, device, T=16):
    model_converter = ann2snn.Converter(mode="max", dataloader=train_dataloader)
    model.to(device)
    snn_model = model_converter(model)
    snn_model.to(device)
    print(snn_model)

    loss_weight = torch.as_tensor([1.0, 2.0], device=device)
    losses = []
    for i, (x, y) in enumerate(train_dataloader):
        x = x.repeat(T, 1, 1, 1, 1)
        x = x.to(device)
        y = y.to(device)
        with torch.no_grad():
            outputs = functional.multi_step_forward(x, snn_model)
            outputs = outputs.mean(0)
            loss = criterion(outputs, y, loss_weight, dice=True,
                             num_classes=num_classes, ignore_index=255)
        losses.append(loss.item())
        functional.reset_net(snn_model)
        print(i)
    return sum(losses) / max(len(losses), 1)
