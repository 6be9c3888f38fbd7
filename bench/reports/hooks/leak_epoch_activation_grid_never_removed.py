# Source: https://github.com/Iversy/Deep/blob/30544e51181e6105d1b07e942749cde67654e141/lab5/lab5.ipynb
# Report: audit (correct code): visualize_activations() registers a forward hook on a conv layer each time it is called, runs one image under no_grad, then removes every handle before returning; this is the variant it avoids, where the handles are never removed
# Shape: the helper, called once per epoch from the training loop, registers the hook and never removes it: every old hook keeps firing on each training and validation forward and appending detached GPU activations to the list its closure keeps alive
# Expect: TML007 line 20
import torch
import torch.nn as nn
import torchvision


def conv_layers(model):
    return [m for m in model.modules() if isinstance(m, nn.Conv2d)]


def visualize_activations(model, image, layer_num, device, writer, step):
    activations = []

    def hook_fn(module, inp, out):
        activations.append(out.detach())

    conv_layers(model)[layer_num].register_forward_hook(hook_fn)  # expect: TML007
    was_training = model.training
    model.eval()
    with torch.no_grad():
        model(image.unsqueeze(0).to(device))
    model.train(was_training)
    act = activations[0][0].cpu()
    grid = torchvision.utils.make_grid(act.unsqueeze(1), nrow=8, normalize=True)
    writer.add_image(f"activations/conv{layer_num}", grid, step)


def train_model(model, train_loader, val_loader, writer, num_epochs=15, lr=1e-3, probe_layer=1):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = model.to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    probe_image, _ = val_loader.dataset[0]
    history = {"train_loss": [], "val_acc": []}
    for epoch in range(num_epochs):
        model.train()
        running = 0.0
        for images, labels in train_loader:
            images, labels = images.to(device), labels.to(device)
            optimizer.zero_grad()
            loss = criterion(model(images), labels)
            loss.backward()
            optimizer.step()
            running += loss.item()
        model.eval()
        correct, total = 0, 0
        with torch.no_grad():
            for images, labels in val_loader:
                preds = model(images.to(device)).argmax(dim=1).cpu()
                correct += (preds == labels).sum().item()
                total += labels.size(0)
        history["train_loss"].append(running / len(train_loader))
        history["val_acc"].append(100.0 * correct / total)
        visualize_activations(model, probe_image, probe_layer, device, writer, epoch)
        print(f"epoch {epoch + 1}: loss {history['train_loss'][-1]:.4f} acc {history['val_acc'][-1]:.2f}")
    return history
