# Source: https://github.com/mlfoundations/model-soups/blob/main/main.py
# Report: the same soup script with every checkpoint loaded as its individual-evaluation step already does it: torch.load(path, map_location='cpu')
# Shape: ingredients and the running soup are averaged on the CPU; only the model built from the candidate soup is moved to the GPU (get_model_from_sd), and evaluation runs under no_grad with .item() reductions
# Expect: near-miss: must be silent
import os

import torch


class ModelWrapper(torch.nn.Module):
    def __init__(self, model, feature_dim, num_classes):
        super().__init__()
        self.model = model
        self.classification_head = torch.nn.Linear(feature_dim, num_classes)

    def forward(self, images):
        features = self.model.encode_image(images)
        features = features / features.norm(dim=-1, keepdim=True)
        return self.classification_head(features)


def get_model_from_sd(state_dict, base_model):
    feature_dim = state_dict["classification_head.weight"].shape[1]
    num_classes = state_dict["classification_head.weight"].shape[0]
    model = ModelWrapper(base_model, feature_dim, num_classes)
    for p in model.parameters():
        p.data = p.data.float()
    model.load_state_dict(state_dict)
    model = model.cuda()
    devices = list(range(torch.cuda.device_count()))
    return torch.nn.DataParallel(model, device_ids=devices)


def maybe_dictionarize_batch(batch):
    if isinstance(batch, dict):
        return batch
    return {"images": batch[0], "labels": batch[1]}


def test_model_on_dataset(model, loader):
    model.eval()
    with torch.no_grad():
        correct, n = 0.0, 0.0
        for i, batch in enumerate(loader):
            batch = maybe_dictionarize_batch(batch)
            inputs, labels = batch["images"].cuda(), batch["labels"].cuda()
            logits = model(inputs)
            pred = logits.argmax(dim=1, keepdim=True)
            correct += pred.eq(labels.view_as(pred)).sum().item()
            n += labels.size(0)
            if i % 20 == 0:
                print(f"[{i}/{len(loader)}] Acc: {100 * correct / n:.2f}")
    return correct / n


def checkpoint_path(model_location, name):
    return os.path.join(model_location, f"{name}.pt")


def uniform_soup(model_location, model_names, base_model, loader):
    num_models = len(model_names)
    soup = None
    for j, name in enumerate(model_names):
        print(f"Adding model {j} of {num_models - 1} to uniform soup.")
        state_dict = torch.load(checkpoint_path(model_location, name), map_location="cpu")
        if soup is None:
            soup = {k: v * (1.0 / num_models) for k, v in state_dict.items()}
        else:
            soup = {k: v * (1.0 / num_models) + soup[k] for k, v in state_dict.items()}
    model = get_model_from_sd(soup, base_model)
    return test_model_on_dataset(model, loader)


def greedy_soup(model_location, val_accs, base_model, held_out_loader):
    # val_accs: list of (model_name, held-out accuracy), best first
    sorted_models = [name for name, _ in val_accs]
    ingredients = [sorted_models[0]]
    soup_params = torch.load(checkpoint_path(model_location, sorted_models[0]), map_location="cpu")
    best_val_acc = val_accs[0][1]
    for i in range(1, len(sorted_models)):
        print(f"Testing model {i} of {len(sorted_models)}")
        new_params = torch.load(checkpoint_path(model_location, sorted_models[i]), map_location="cpu")
        num = len(ingredients)
        candidate = {
            k: soup_params[k].clone() * (num / (num + 1.0)) + new_params[k].clone() * (1.0 / (num + 1))
            for k in new_params
        }
        model = get_model_from_sd(candidate, base_model)
        acc = test_model_on_dataset(model, held_out_loader)
        print(f"Potential greedy soup val acc {acc}, best so far {best_val_acc}.")
        if acc > best_val_acc:
            ingredients.append(sorted_models[i])
            best_val_acc = acc
            soup_params = candidate
            print(f"Adding to soup. New soup is {ingredients}")
    return soup_params, ingredients
