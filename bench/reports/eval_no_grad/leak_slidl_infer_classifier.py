# Source: https://github.com/markowetzlab/slidl/pull/1
# Report: "Added torch.no_grad() to inference to stop GPU memory filling up": Slide.inferClassifier ran the trained model over every tile batch of a whole-slide image with autograd on
# Shape: inferClassifier() calls trainedModel.eval() and then the model on each tile batch without a grad-disabled context; the per-tile probabilities leave through .cpu().data.numpy(), but each batch saves a full set of activations for a backward that never comes
# Expect: TML003 line 57
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm


class WholeSlideImageDataset(Dataset):
    def __init__(self, slide, transform=None):
        self.slide = slide
        self.transform = transform
        self.suitableTileAddresses = list(slide.tileDictionary.keys())

    def __len__(self):
        return len(self.suitableTileAddresses)

    def __getitem__(self, idx):
        address = self.suitableTileAddresses[idx]
        tile = self.slide.readTile(address)
        if self.transform is not None:
            tile = self.transform(tile)
        return {"image": tile, "tileAddress": address}


class Slide:
    def __init__(self, tiles):
        self.tileDictionary = {address: {} for address in tiles}
        self.tiles = tiles
        self.classifierPredictionTileAddresses = []

    def readTile(self, address):
        return torch.as_tensor(self.tiles[address], dtype=torch.float32)

    def appendTag(self, tileAddress, key, val):
        self.tileDictionary[tileAddress][key] = val

    def inferClassifier(self, trainedModel, classNames, dataTransforms=None, batchSize=30, numWorkers=16, silent=False):
        if not isinstance(classNames, list):
            raise ValueError("classes must be a list if defined")

        device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
        trainedModel.to(device)
        trainedModel.eval()

        pathSlideDataset = WholeSlideImageDataset(self, transform=dataTransforms)
        first = pathSlideDataset.suitableTileAddresses[0]
        if "classifierInferencePrediction" in self.tileDictionary[first]:
            raise PermissionError("Classification predictions are already present in the tile dictionary.")

        pathSlideDataloader = DataLoader(pathSlideDataset, batch_size=batchSize, shuffle=False, num_workers=numWorkers)
        classifierPredictionTileAddresses = []
        for inputs in tqdm(pathSlideDataloader, disable=silent):
            inputTile = inputs["image"].to(device)
            output = trainedModel(inputTile)  # expect: TML003
            output = output.to(device)

            batch_prediction = torch.nn.functional.softmax(output, dim=1).cpu().data.numpy()

            for index in range(len(inputTile)):
                tileAddress = (inputs["tileAddress"][0][index].item(), inputs["tileAddress"][1][index].item())
                preds = batch_prediction[index, ...].tolist()
                if len(preds) != len(classNames):
                    raise ValueError("Model has %d classes but %d class names were provided" % (len(preds), len(classNames)))
                prediction = {name: p for name, p in zip(classNames, preds)}
                self.appendTag(tileAddress, "classifierInferencePrediction", prediction)
                classifierPredictionTileAddresses.append(tileAddress)

        if len(classifierPredictionTileAddresses) > 0:
            self.classifierPredictionTileAddresses = classifierPredictionTileAddresses
        else:
            raise Warning("No suitable tiles found")


if __name__ == "__main__":
    import torchvision
    tiles = {(x, y): np.random.rand(3, 224, 224) for x in range(20) for y in range(20)}
    slide = Slide(tiles)
    slide.inferClassifier(torchvision.models.resnet18(num_classes=3), ["normal", "atypia", "tumour"], numWorkers=0)
