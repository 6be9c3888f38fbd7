# Source: https://github.com/TeTo16/Image_Prediction_Project/blob/5153cb27d9e01f221f2899b6abd29eb529cd464d/src/predict/predict_gender.py
# Report: audit: predict_gender() runs the whole test loader under torch.no_grad() and appends every batch's argmax predictions and decoded labels to two lists while they are still CUDA tensors; they are concatenated and moved to the CPU only after the loop, for sklearn metrics and a confusion matrix
# Shape: fixed: same predict helper and report; each batch is moved to the CPU before it is appended (.cpu() inside the no_grad loop), so the lists hold host tensors and the final torch.cat runs on the CPU
# Expect: near-miss: must be silent
import torch
from sklearn.metrics import accuracy_score, confusion_matrix, f1_score, precision_score, recall_score
from torch.utils.data import DataLoader


class GenderLabels:
    names = ("male", "female")

    @staticmethod
    def decode(one_hot):
        return torch.max(one_hot, 1)[1]


def predict_gender(model, loader, device="cuda"):
    all_preds, all_labels = [], []
    model.eval()
    with torch.no_grad():
        for inputs, labels in loader:
            inputs, labels = inputs.to(device), labels.to(device)
            outputs = model(inputs)
            preds = outputs.argmax(dim=1)
            all_preds.append(preds.cpu())
            correct_labels = GenderLabels.decode(labels)
            all_labels.append(correct_labels.cpu())
    all_preds = torch.cat(all_preds)
    all_labels = torch.cat(all_labels)
    return all_preds, all_labels


def report(model, test_dataset, device, batch_size=64):
    loader = DataLoader(test_dataset, batch_size=batch_size, shuffle=False)
    preds, labels = predict_gender(model, loader, device=device)
    y_pred, y_true = preds.numpy(), labels.numpy()
    scores = {
        "accuracy": accuracy_score(y_true, y_pred),
        "precision": precision_score(y_true, y_pred, average="macro"),
        "recall": recall_score(y_true, y_pred, average="macro"),
        "f1": f1_score(y_true, y_pred, average="macro"),
    }
    for name, value in scores.items():
        print(f"{name.capitalize()}: {value:.4f}")
    cm = confusion_matrix(y_true, y_pred, labels=range(len(GenderLabels.names)))
    return scores, cm


if __name__ == "__main__":
    import sys

    from torchvision.models import resnet18

    from gender_data import load_test_split

    model = resnet18(num_classes=2)
    model.load_state_dict(torch.load(sys.argv[1], map_location="cpu"))
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dataset = load_test_split(sys.argv[2])
    scores, cm = report(model.to(device), dataset, device)
    print(cm)
