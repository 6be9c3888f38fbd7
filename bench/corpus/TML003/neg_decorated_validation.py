# Modelled on: https://github.com/mapbox/robosat/pull/109
# Report: maintainers preferred decorating the validation function with @torch.no_grad().
import torch


@torch.no_grad()
def validate(loader, num_classes, device, net, criterion):
    net.eval()
    running_loss = 0.0
    for images, masks, tiles in loader:
        images, masks = images.to(device), masks.to(device)
        outputs = net(images)
        running_loss += criterion(outputs, masks).item()
    return running_loss / len(loader)
